"""The deployment manifests validate: deploy/docker-compose.yml and the Helm chart.

Offline, as CI runs it:

* the Compose file against the Compose Specification's JSON schema (the copy that
  ``check-jsonschema`` ships), plus what the schema cannot say: the services, scalable
  workers, Redis' append-only file and the volumes, healthchecks, the Docker socket only
  behind an opt-in profile, and every ``KAIZEN_*`` variable a real setting; and, where a
  Compose v2 CLI exists, ``docker compose config``;
* the chart's values against its ``values.schema.json``; then the chart rendered with
  ``helm template`` (several value sets) and every object checked against the Kubernetes
  OpenAPI schemas in strict mode (``kubernetes-validate``, which bundles them) for the
  oldest Kubernetes the chart supports and the newest the package knows, after
  ``helm lint --strict``. On the rendered objects: probes on /healthz and /readyz, one
  Recreate beat, a worker Deployment whose replicas (or HPA) come from the values,
  secret settings only by secretKeyRef (never a value inlined outside the Secret),
  non-root containers except the bwrap worker's documented set, and every ``KAIZEN_*``
  name a field of :class:`bot.settings.Settings`.

Helm comes from PATH (or ``KAIZEN_TEST_HELM``); the chart tests are skipped without it,
unless ``KAIZEN_REQUIRE_HELM=1`` (set by CI), where that is a failure instead.
"""

from __future__ import annotations

import base64
import copy
import importlib.resources
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from pydantic import SecretStr

from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "deploy" / "docker-compose.yml"
CHART = ROOT / "deploy" / "helm" / "kaizen"
# The chart's kubeVersion floor, and the newest schemas kubernetes-validate bundles.
KUBE_VERSIONS = ("1.30.0", kubernetes_validate.latest_version())

HELM = os.environ.get("KAIZEN_TEST_HELM") or shutil.which("helm")
HELM_REQUIRED = os.environ.get("KAIZEN_REQUIRE_HELM") == "1"
if HELM is None and HELM_REQUIRED:
    raise RuntimeError("KAIZEN_REQUIRE_HELM=1 but no helm binary is on PATH")
needs_helm = pytest.mark.skipif(HELM is None, reason="helm is not installed")

SETTINGS_ENV = {f"KAIZEN_{name.upper()}" for name in Settings.model_fields}
# The settings whose values are secrets: pydantic SecretStr fields.
SECRET_ENV = {
    f"KAIZEN_{name.upper()}"
    for name, field in Settings.model_fields.items()
    if SecretStr in getattr(field.annotation, "__args__", (field.annotation,))
}
# Environment variables the manifests may set that are not Kaizen settings.
OTHER_ENV = {"PROMETHEUS_MULTIPROC_DIR", "TMPDIR"}
MARKER = "not-a-real-secret-0123456789"


def test_secret_settings_are_known() -> None:
    assert sorted(SECRET_ENV) == [
        "KAIZEN_LLM_API_KEY",
        "KAIZEN_PRIVATE_KEY",
        "KAIZEN_QDRANT_API_KEY",
        "KAIZEN_REPORTS_TOKEN",
        "KAIZEN_WEBHOOK_SECRET",
    ]


# -- Docker Compose ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _compose_schema() -> dict[str, Any]:
    vendor = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    schema: dict[str, Any] = json.loads((vendor / "compose-spec.json").read_text("utf-8"))
    return schema


def test_compose_matches_the_compose_specification(compose: dict[str, Any]) -> None:
    schema = _compose_schema()
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    errors = sorted(validator_cls(schema).iter_errors(compose), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_compose_schema_check_catches_mistakes(compose: dict[str, Any]) -> None:
    schema = _compose_schema()
    broken = copy.deepcopy(compose)
    broken["services"]["web"]["helthcheck"] = broken["services"]["web"].pop("healthcheck")
    assert not jsonschema.validators.validator_for(schema)(schema).is_valid(broken)


def test_compose_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"web", "worker", "beat", "redis", "qdrant", "flower"} <= set(services)
    for name in ("web", "worker", "beat"):
        service = services[name]
        assert service["image"] == "${KAIZEN_IMAGE:-kaizen:latest}"
        assert service["entrypoint"] == ["kaizen"]
        assert service["env_file"] == [".env"]
        assert {"redis", "qdrant"} <= set(service["depends_on"])
        assert "healthcheck" in service, name
        assert "profiles" not in service
    assert services["web"]["command"][0] == "serve"
    assert services["worker"]["command"][:3] == ["worker", "--queues", "reviews,fixes,feedback"]
    assert services["beat"]["command"] == ["beat"]
    for name in ("redis", "qdrant", "flower"):
        assert "healthcheck" in services[name], name
    assert services["flower"]["profiles"] == ["flower"]


def test_compose_worker_scales_and_beat_stays_single(compose: dict[str, Any]) -> None:
    # `--scale worker=N` fails on a fixed container name or a published host port.
    for name in ("worker", "beat"):
        service = compose["services"][name]
        assert "container_name" not in service
        assert "ports" not in service
        assert "deploy" not in service or service["deploy"].get("replicas", 1) == 1


def test_compose_points_kaizen_at_redis_and_qdrant(compose: dict[str, Any]) -> None:
    for name in ("web", "worker", "beat"):
        env = compose["services"][name]["environment"]
        assert env["KAIZEN_REDIS_URL"] == "redis://redis:6379/0"
        assert env["KAIZEN_QDRANT_URL"] == "http://qdrant:6333"
        assert env["KAIZEN_DATA_DIR"] == "/var/lib/kaizen"


def test_compose_redis_and_qdrant_persist(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert "redis-data:/data" in redis["volumes"]
    qdrant = compose["services"]["qdrant"]
    assert qdrant["image"].startswith("qdrant/qdrant:")
    assert "qdrant-data:/qdrant/storage" in qdrant["volumes"]


def test_compose_named_volumes_are_declared(compose: dict[str, Any]) -> None:
    declared = set(compose["volumes"])
    used = set()
    for service in compose["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if not source.startswith(("/", ".")):
                used.add(source)
    assert used == declared


def test_compose_sandbox_is_bwrap_and_the_docker_socket_is_opt_in(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    assert services["worker"]["environment"]["KAIZEN_SANDBOX"] == "bwrap"
    socket_users = {
        name
        for name, service in services.items()
        if any("docker.sock" in volume for volume in service.get("volumes", []))
    }
    assert socket_users == {"worker-docker"}
    assert services["worker-docker"]["profiles"] == ["docker-sandbox"]
    assert services["worker-docker"]["environment"]["KAIZEN_SANDBOX"] == "docker"
    text = COMPOSE_FILE.read_text(encoding="utf-8")
    assert "WARNING" in text.split("worker-docker:")[0].rsplit("\n\n", 1)[-1]
    # Only the bwrap worker is root, with what the backend needs; nothing is privileged.
    for name, service in services.items():
        assert not service.get("privileged", False), name
        if name != "worker":
            assert "cap_add" not in service and "user" not in service, name
    assert services["worker"]["cap_add"] == ["SYS_ADMIN"]


def test_compose_env_vars_are_settings(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        env = service.get("environment", {})
        names = set(env) if isinstance(env, dict) else {e.split("=", 1)[0] for e in env}
        kaizen = {n for n in names if n.startswith("KAIZEN_")}
        assert kaizen <= SETTINGS_ENV, (name, kaizen - SETTINGS_ENV)
        if name != "flower":
            assert names - kaizen <= OTHER_ENV, name
        # No secret setting is written into the file: they come from .env.
        assert not kaizen & SECRET_ENV, name


def test_compose_readme_env_keys_are_settings() -> None:
    readme = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Docker Compose", 1)[1].split("\n## ", 1)[0]
    keys = {
        line.split("=", 1)[0].strip()
        for line in section.splitlines()
        if line.strip().startswith("KAIZEN_") and "=" in line
    }
    assert {"KAIZEN_APP_ID", "KAIZEN_PRIVATE_KEY", "KAIZEN_WEBHOOK_SECRET"} <= keys
    assert keys <= SETTINGS_ENV, keys - SETTINGS_ENV


def _compose_cli() -> list[str] | None:
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        return [docker, "compose"]
    standalone = shutil.which("docker-compose")
    if standalone:
        out = subprocess.run([standalone, "version", "--short"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip().lstrip("v").startswith("2"):
            return [standalone]
    return None


def test_docker_compose_config(tmp_path: Path) -> None:
    cli = _compose_cli()
    if cli is None:
        pytest.skip("no Docker Compose v2 CLI here; the schema test above covers the file")
    shutil.copy(COMPOSE_FILE, tmp_path / "docker-compose.yml")
    (tmp_path / ".env").write_text(f"KAIZEN_WEBHOOK_SECRET={MARKER}\n", encoding="utf-8")
    for profiles in ([], ["--profile", "flower", "--profile", "docker-sandbox"]):
        result = subprocess.run(
            [*cli, "-f", str(tmp_path / "docker-compose.yml"), *profiles, "config", "-q"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr


# -- Helm chart ----------------------------------------------------------------------------


def _values() -> dict[str, Any]:
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    assert isinstance(values, dict)
    return values


def _values_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((CHART / "values.schema.json").read_text("utf-8"))
    return schema


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def test_chart_metadata() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    assert chart["apiVersion"] == "v2"
    assert chart["name"] == "kaizen"
    assert "dependencies" not in chart  # Redis and Qdrant are in-chart: no download
    assert (CHART / "templates" / "NOTES.txt").is_file()


def test_default_values_match_the_schema() -> None:
    schema = _values_schema()
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    validator_cls(schema).validate(_values())


@pytest.mark.parametrize(
    "override",
    [
        {"beat": {"replicaCount": 2}},
        {"worker": {"sandbox": "docker"}},
        {"config": {"KAIZEN_WEBHOOK_SECRET": "x"}},
        {"config": {"KAIZEN_REDIS_URL": "redis://x:6379/0"}},
        {"config": {"APP_ID": "1"}},
        {"secret": {"keys": {"KAIZEN_APP_ID": "app-id"}}},
        {"image": {"tag": ""}},
        {"externalRedis": {"url": "http://redis:6379"}},
        {"web": {"replicaCount": 0}},
    ],
)
def test_schema_refuses_bad_values(override: dict[str, Any]) -> None:
    schema = _values_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert not validator.is_valid(_merge(_values(), override))


def test_config_keys_are_settings() -> None:
    values = _values()
    assert set(values["config"]) <= SETTINGS_ENV
    assert set(values["secret"]["keys"]) == SECRET_ENV


def _helm(*args: str) -> subprocess.CompletedProcess[str]:
    assert HELM is not None
    return subprocess.run([HELM, *args], capture_output=True, text=True, timeout=120, check=False)


def _render(tmp_path: Path, values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    args = ["template", "kz", str(CHART), "--namespace", "kaizen"]
    if values is not None:
        file = tmp_path / "values.yaml"
        file.write_text(yaml.safe_dump(values), encoding="utf-8")
        args += ["--values", str(file)]
    result = _helm(*args)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def _by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    containers: list[dict[str, Any]] = doc["spec"]["template"]["spec"]["containers"]
    return containers


def _env_names(container: dict[str, Any]) -> set[str]:
    return {e["name"] for e in container.get("env", [])}


def _walk(node: Any) -> Iterator[Any]:
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


SECRET_VALUES: dict[str, Any] = {
    "secret": {
        "values": {
            "private-key": f"{MARKER}-pem",
            "webhook-secret": f"{MARKER}-hook",
            "llm-api-key": f"{MARKER}-llm",
            "reports-token": f"{MARKER}-reports",
        }
    },
    "config": {"KAIZEN_APP_ID": "12345", "KAIZEN_LLM_BASE_URL": "https://llm.example/v1"},
}
VARIANTS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "secret-values": SECRET_VALUES,
    "existing-secret": {"secret": {"existingSecret": "kaizen-prod"}},
    "autoscaled": {"worker": {"autoscaling": {"enabled": True}}},
    "ingress": {"web": {"ingress": {"enabled": True, "className": "nginx"}}},
    "external": {
        "redis": {"enabled": False},
        "externalRedis": {"existingSecret": "redis-auth"},
        "qdrant": {"enabled": False},
        "externalQdrant": {"url": "https://qdrant.example:6333"},
        "dataDir": {"existingClaim": "kaizen-data"},
    },
    "no-sandbox": {"worker": {"sandbox": "none", "metricsPort": 9100, "concurrency": 4}},
    "privileged-bwrap": {"worker": {"bwrap": {"privileged": True}}},
}


@needs_helm
def test_helm_lint() -> None:
    result = _helm("lint", "--strict", str(CHART))
    assert result.returncode == 0, result.stdout + result.stderr


@needs_helm
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_rendered_objects_match_the_kubernetes_schemas(tmp_path: Path, variant: str) -> None:
    docs = _render(tmp_path, VARIANTS[variant])
    assert docs
    for doc in docs:
        for version in KUBE_VERSIONS:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{doc['kind']}/{doc['metadata']['name']} on {version}: {exc}")


@needs_helm
def test_kubernetes_schema_check_catches_mistakes(tmp_path: Path) -> None:
    web = _by_kind(_render(tmp_path), "Deployment")["kz-kaizen-web"]
    _containers(web)[0]["livenessProbe"]["httpGet"]["paht"] = "/healthz"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(web, KUBE_VERSIONS[0], strict=True)


@needs_helm
def test_helm_refuses_values_outside_the_schema(tmp_path: Path) -> None:
    for override in ({"beat": {"replicaCount": 2}}, {"config": {"KAIZEN_PRIVATE_KEY": "x"}}):
        file = tmp_path / "bad.yaml"
        file.write_text(yaml.safe_dump(override), encoding="utf-8")
        result = _helm("template", "kz", str(CHART), "--values", str(file))
        assert result.returncode != 0
        assert "schema" in result.stderr.lower()
    # Without in-chart Redis the broker must be named.
    file.write_text(yaml.safe_dump({"redis": {"enabled": False}}), encoding="utf-8")
    result = _helm("template", "kz", str(CHART), "--values", str(file))
    assert result.returncode != 0
    assert "externalRedis" in result.stderr


@needs_helm
def test_web_probes_and_service(tmp_path: Path) -> None:
    docs = _render(tmp_path)
    web = _by_kind(docs, "Deployment")["kz-kaizen-web"]
    (container,) = _containers(web)
    assert container["command"][:2] == ["kaizen", "serve"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    port = container["ports"][0]
    assert port["containerPort"] == 8000
    assert container["livenessProbe"]["httpGet"]["port"] == port["name"]
    service = _by_kind(docs, "Service")["kz-kaizen-web"]
    assert service["spec"]["selector"] == web["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]


@needs_helm
def test_ingress_routes_to_the_web_service(tmp_path: Path) -> None:
    docs = _render(tmp_path, VARIANTS["ingress"])
    (ingress,) = _by_kind(docs, "Ingress").values()
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "kz-kaizen-web", "port": {"name": "http"}}


@needs_helm
def test_beat_is_one_replica_recreated(tmp_path: Path) -> None:
    for variant in ("defaults", "autoscaled"):
        beat = _by_kind(_render(tmp_path, VARIANTS[variant]), "Deployment")["kz-kaizen-beat"]
        assert beat["spec"]["replicas"] == 1
        assert beat["spec"]["strategy"] == {"type": "Recreate"}
        assert _containers(beat)[0]["command"] == ["kaizen", "beat"]


@needs_helm
def test_worker_scales_horizontally(tmp_path: Path) -> None:
    worker = _by_kind(_render(tmp_path, {"worker": {"replicaCount": 7}}), "Deployment")[
        "kz-kaizen-worker"
    ]
    assert worker["spec"]["replicas"] == 7
    command = _containers(worker)[0]["command"]
    assert command[:4] == ["kaizen", "worker", "--queues", "reviews,fixes,feedback"]
    assert worker["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= 1800

    docs = _render(tmp_path, VARIANTS["autoscaled"])
    worker = _by_kind(docs, "Deployment")["kz-kaizen-worker"]
    assert "replicas" not in worker["spec"]  # the HPA owns it
    (hpa,) = _by_kind(docs, "HorizontalPodAutoscaler").values()
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "kz-kaizen-worker",
    }
    assert hpa["spec"]["minReplicas"] == 2
    assert hpa["spec"]["maxReplicas"] == 10


@needs_helm
def test_redis_and_qdrant_are_in_chart_or_external(tmp_path: Path) -> None:
    docs = _render(tmp_path)
    sets = _by_kind(docs, "StatefulSet")
    assert set(sets) == {"kz-kaizen-redis", "kz-kaizen-qdrant"}
    redis_args = _containers(sets["kz-kaizen-redis"])[0]["args"]
    assert redis_args[redis_args.index("--appendonly") + 1] == "yes"
    for name in sets:
        assert sets[name]["spec"]["volumeClaimTemplates"], name
    config = _by_kind(docs, "ConfigMap")["kz-kaizen-config"]["data"]
    assert config["KAIZEN_REDIS_URL"] == "redis://kz-kaizen-redis:6379/0"
    assert config["KAIZEN_QDRANT_URL"] == "http://kz-kaizen-qdrant:6333"
    services = _by_kind(docs, "Service")
    assert services["kz-kaizen-redis"]["spec"]["ports"][0]["port"] == 6379
    assert services["kz-kaizen-qdrant"]["spec"]["ports"][0]["port"] == 6333

    docs = _render(tmp_path, VARIANTS["external"])
    assert not _by_kind(docs, "StatefulSet")
    config = _by_kind(docs, "ConfigMap")["kz-kaizen-config"]["data"]
    assert "KAIZEN_REDIS_URL" not in config  # it holds a password: from its Secret
    assert config["KAIZEN_QDRANT_URL"] == "https://qdrant.example:6333"
    for deployment in _by_kind(docs, "Deployment").values():
        (container,) = _containers(deployment)
        (redis_env,) = [e for e in container["env"] if e["name"] == "KAIZEN_REDIS_URL"]
        assert redis_env["valueFrom"]["secretKeyRef"] == {"name": "redis-auth", "key": "redis-url"}
        (data,) = [
            v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "data"
        ]
        assert data["persistentVolumeClaim"] == {"claimName": "kaizen-data"}


@needs_helm
@pytest.mark.parametrize("variant", ["secret-values", "existing-secret"])
def test_secrets_come_from_secret_objects(tmp_path: Path, variant: str) -> None:
    docs = _render(tmp_path, VARIANTS[variant])
    secrets = _by_kind(docs, "Secret")
    secret_name = "kaizen-prod" if variant == "existing-secret" else "kz-kaizen-secrets"
    if variant == "existing-secret":
        assert not secrets  # the chart makes none
    else:
        (secret,) = secrets.values()
        assert secret["metadata"]["name"] == secret_name
        decoded = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
        assert decoded == SECRET_VALUES["secret"]["values"]
    # No secret value appears anywhere but in the Secret, not even base64-encoded.
    for doc in docs:
        if doc["kind"] == "Secret":
            continue
        text = yaml.safe_dump(doc)
        assert MARKER not in text, doc["metadata"]["name"]
        assert base64.b64encode(MARKER.encode()).decode()[:20] not in text
    config = _by_kind(docs, "ConfigMap")["kz-kaizen-config"]["data"]
    assert not set(config) & SECRET_ENV
    wanted = {
        "web": {"KAIZEN_WEBHOOK_SECRET", "KAIZEN_REPORTS_TOKEN"},
        "worker": {"KAIZEN_PRIVATE_KEY"},
        "beat": set(),
    }
    for component, needed in wanted.items():
        (container,) = _containers(_by_kind(docs, "Deployment")[f"kz-kaizen-{component}"])
        assert container["envFrom"] == [{"configMapRef": {"name": "kz-kaizen-config"}}]
        secret_env = {e["name"]: e for e in container["env"] if e["name"] in SECRET_ENV}
        assert needed <= set(secret_env), component
        for env in secret_env.values():
            assert "value" not in env
            assert env["valueFrom"]["secretKeyRef"]["name"] == secret_name
    # Least privilege: the web process never gets the App's private key.
    (web,) = _containers(_by_kind(docs, "Deployment")["kz-kaizen-web"])
    assert "KAIZEN_PRIVATE_KEY" not in _env_names(web)


@needs_helm
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_kaizen_env_var_is_a_setting(tmp_path: Path, variant: str) -> None:
    docs = _render(tmp_path, VARIANTS[variant])
    names: set[str] = set(_by_kind(docs, "ConfigMap")["kz-kaizen-config"]["data"])
    for deployment in _by_kind(docs, "Deployment").values():
        for container in _containers(deployment):
            names |= _env_names(container)
    kaizen = {n for n in names if n.startswith("KAIZEN_")}
    assert kaizen <= SETTINGS_ENV, kaizen - SETTINGS_ENV
    assert names - kaizen <= OTHER_ENV
    assert {"KAIZEN_REDIS_URL", "KAIZEN_QDRANT_URL", "KAIZEN_DATA_DIR"} <= names


def _pod_and_container_security(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    spec = doc["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    return spec.get("securityContext", {}), container.get("securityContext", {})


def _runs_as_non_root(doc: dict[str, Any]) -> bool:
    pod, container = _pod_and_container_security(doc)
    merged = {**pod, **container}
    return merged.get("runAsNonRoot") is True and merged.get("runAsUser", 1) != 0


@needs_helm
def test_containers_run_as_non_root(tmp_path: Path) -> None:
    docs = _render(tmp_path)
    workloads = {**_by_kind(docs, "Deployment"), **_by_kind(docs, "StatefulSet")}
    for name, doc in workloads.items():
        pod, container = _pod_and_container_security(doc)
        assert doc["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
        if name == "kz-kaizen-worker":
            continue  # bwrap: below
        assert _runs_as_non_root(doc), name
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert container["allowPrivilegeEscalation"] is False, name
        assert container["capabilities"] == {"drop": ["ALL"]}, name
        assert container["readOnlyRootFilesystem"] is True, name

    worker = _by_kind(_render(tmp_path, VARIANTS["no-sandbox"]), "Deployment")["kz-kaizen-worker"]
    assert _runs_as_non_root(worker)
    _, container = _pod_and_container_security(worker)
    assert container["capabilities"] == {"drop": ["ALL"]}
    env = {e["name"]: e.get("value") for e in _containers(worker)[0]["env"]}
    assert env["KAIZEN_SANDBOX"] == "none"
    assert env["KAIZEN_WORKER_METRICS_PORT"] == "9100"


@needs_helm
def test_bwrap_worker_gets_exactly_what_the_backend_needs(tmp_path: Path) -> None:
    worker = _by_kind(_render(tmp_path), "Deployment")["kz-kaizen-worker"]
    spec = worker["spec"]["template"]["spec"]
    pod, container = _pod_and_container_security(worker)
    env = {e["name"]: e.get("value") for e in _containers(worker)[0]["env"]}
    assert env["KAIZEN_SANDBOX"] == "bwrap"
    # Root in the container, in a user namespace of its own: an unprivileged host uid.
    assert spec["hostUsers"] is False
    assert pod["runAsUser"] == 0
    assert "privileged" not in container
    assert container["procMount"] == "Unmasked"
    assert container["capabilities"]["drop"] == ["ALL"]
    assert set(container["capabilities"]["add"]) == {
        "SYS_ADMIN",
        "SETUID",
        "SETGID",
        "CHOWN",
        "FOWNER",
        "DAC_OVERRIDE",
        "KILL",
    }
    assert pod["seccompProfile"] == {"type": "Unconfined"}
    assert container["readOnlyRootFilesystem"] is True

    worker = _by_kind(_render(tmp_path, VARIANTS["privileged-bwrap"]), "Deployment")[
        "kz-kaizen-worker"
    ]
    _, container = _pod_and_container_security(worker)
    assert container["privileged"] is True
    assert "hostUsers" not in worker["spec"]["template"]["spec"]


@needs_helm
def test_image_comes_from_values(tmp_path: Path) -> None:
    docs = _render(tmp_path, {"image": {"repository": "registry.example/kaizen", "tag": "1.2.3"}})
    for name in ("web", "worker", "beat"):
        (container,) = _containers(_by_kind(docs, "Deployment")[f"kz-kaizen-{name}"])
        assert container["image"] == "registry.example/kaizen:1.2.3"
    docs = _render(tmp_path)
    (container,) = _containers(_by_kind(docs, "Deployment")["kz-kaizen-web"])
    assert container["image"] == "kaizen:latest"
