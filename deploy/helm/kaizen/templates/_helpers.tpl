{{/* Names and labels. */}}
{{- define "kaizen.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kaizen.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kaizen.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "kaizen.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: include "kaizen.selectorLabels" (list . "web") */}}
{{- define "kaizen.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "kaizen.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "kaizen.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kaizen.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "kaizen.image" -}}
{{- printf "%s:%s" .Values.image.repository .Values.image.tag -}}
{{- end -}}

{{- define "kaizen.secretName" -}}
{{- default (printf "%s-secrets" (include "kaizen.fullname" .)) .Values.secret.existingSecret -}}
{{- end -}}

{{/* The broker's URL when it is not secret (in-chart Redis or a plain external URL). */}}
{{- define "kaizen.redisUrl" -}}
{{- if .Values.redis.enabled -}}
{{- printf "redis://%s-redis:6379/0" (include "kaizen.fullname" .) -}}
{{- else if not .Values.externalRedis.existingSecret -}}
{{- required "redis.enabled=false needs externalRedis.url or externalRedis.existingSecret" .Values.externalRedis.url -}}
{{- end -}}
{{- end -}}

{{- define "kaizen.qdrantUrl" -}}
{{- if .Values.qdrant.enabled -}}
{{- printf "http://%s-qdrant:6333" (include "kaizen.fullname" .) -}}
{{- else -}}
{{- required "qdrant.enabled=false needs externalQdrant.url" .Values.externalQdrant.url -}}
{{- end -}}
{{- end -}}

{{/*
The environment of a Kaizen container: the ConfigMap, then the secret settings this process
uses, each by secretKeyRef. include "kaizen.env" (list . (list "KAIZEN_WEBHOOK_SECRET" ...))
*/}}
{{- define "kaizen.env" -}}
{{- $root := index . 0 -}}
{{- $wanted := index . 1 -}}
envFrom:
  - configMapRef:
      name: {{ include "kaizen.fullname" $root }}-config
env:
  - name: PROMETHEUS_MULTIPROC_DIR
    value: /run/kaizen/metrics
  {{- if and (not $root.Values.redis.enabled) $root.Values.externalRedis.existingSecret }}
  - name: KAIZEN_REDIS_URL
    valueFrom:
      secretKeyRef:
        name: {{ $root.Values.externalRedis.existingSecret }}
        key: {{ $root.Values.externalRedis.existingSecretKey }}
  {{- end }}
  {{- range $env := $wanted }}
  {{- $key := index $root.Values.secret.keys $env }}
  {{- if $key }}
  - name: {{ $env }}
    valueFrom:
      secretKeyRef:
        name: {{ include "kaizen.secretName" $root }}
        key: {{ $key }}
        optional: true
  {{- end }}
  {{- end }}
{{- end -}}

{{/* Volumes every Kaizen pod has: the data dir, /tmp and the metrics folder. */}}
{{- define "kaizen.volumes" -}}
- name: data
  {{- if .Values.dataDir.existingClaim }}
  persistentVolumeClaim:
    claimName: {{ .Values.dataDir.existingClaim }}
  {{- else }}
  emptyDir:
    sizeLimit: {{ .Values.dataDir.sizeLimit }}
  {{- end }}
- name: tmp
  emptyDir: {}
- name: metrics
  emptyDir:
    medium: Memory
    sizeLimit: 64Mi
{{- end -}}

{{- define "kaizen.volumeMounts" -}}
- name: data
  mountPath: {{ .Values.dataDir.path }}
- name: tmp
  mountPath: /tmp
- name: metrics
  mountPath: /run/kaizen/metrics
{{- end -}}

{{/* Pod-level settings shared by the Kaizen Deployments. */}}
{{- define "kaizen.podCommon" -}}
serviceAccountName: {{ include "kaizen.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "kaizen.podAnnotations" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- with .Values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}
