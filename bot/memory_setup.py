"""Building Kaizen's memory from settings (the one place that knows which stores to use).

Scores, the activity log, parked signals and the archive of retired signals live in Redis
when ``KAIZEN_REDIS_URL`` is set (shared by every worker on every machine), otherwise in
SQLite under the data dir; experiences in a Qdrant server when
``KAIZEN_QDRANT_URL`` is set, otherwise in embedded storage that one process may open.
"""

from __future__ import annotations

from bot.settings import Settings
from memory.activity import ActivityLog, RedisActivityLog, SqliteActivityLog
from memory.archive import ArchiveStore, RedisSignalArchive, SignalArchive
from memory.embedding import make_embedder
from memory.experiences import ExperienceStore, open_store
from memory.pending import PendingSignals, PendingStore, RedisPendingSignals
from memory.scores import RedisScoreStore, ScoreStore, SqliteScoreStore
from memory.service import Memory, default_paths
from memory.trajectories import TrajectoryStore


def build_memory(settings: Settings) -> Memory:
    data_dir = settings.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    paths = default_paths(data_dir)
    scores: ScoreStore
    activity: ActivityLog
    pending: PendingStore
    archive: ArchiveStore
    if settings.redis_url:
        scores = RedisScoreStore(settings.redis_url, settings.learning_half_life_days)
        activity = RedisActivityLog(settings.redis_url)
        pending = RedisPendingSignals(settings.redis_url)
        archive = RedisSignalArchive(settings.redis_url)
    else:
        scores = SqliteScoreStore(paths["scores"], settings.learning_half_life_days)
        activity = SqliteActivityLog(paths["activity"])
        pending = PendingSignals(paths["pending"])
        archive = SignalArchive(paths["archive"])

    def open_experiences() -> ExperienceStore:
        embedder = make_embedder(
            settings.embedder,
            data_dir=data_dir,
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
            model=settings.embedding_model,
        )
        return open_store(
            url=settings.qdrant_url,
            api_key=(
                settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
            ),
            path=settings.qdrant_local_path,
            embedder=embedder,
            retention_per_repo=settings.retention_per_repo,
        )

    return Memory(
        scores=scores,
        trajectories=TrajectoryStore(paths["trajectories"]),
        pending=pending,
        archive=archive,
        open_experiences=open_experiences,
        activity=activity,
    )
