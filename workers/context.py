"""Per-process resources for tasks: built on first use, reused by every task after."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from bot.github import GitHubApp
from bot.memory_setup import build_memory
from bot.settings import Settings
from memory.service import Memory
from workers.llm import ChatModel, chat_from_settings
from workers.review.state import ReviewState, review_state


@dataclass
class WorkerContext:
    settings: Settings
    _github: GitHubApp | None = field(default=None, repr=False)
    _memory: Memory | None = field(default=None, repr=False)
    _review_state: ReviewState | None = field(default=None, repr=False)
    _chat: ChatModel | None = field(default=None, repr=False)
    _chat_built: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def github(self) -> GitHubApp:
        """The App client; needs KAIZEN_APP_ID and KAIZEN_PRIVATE_KEY (only here)."""
        with self._lock:
            if self._github is None:
                self._github = GitHubApp(self.settings)
            return self._github

    @property
    def memory(self) -> Memory:
        """Kaizen's memory; embedded Qdrant is only opened when an experience is touched."""
        with self._lock:
            if self._memory is None:
                self._memory = build_memory(self.settings)
            return self._memory

    @property
    def review_state(self) -> ReviewState:
        """Review locks, budgets and watched PRs: Redis when configured, else SQLite."""
        with self._lock:
            if self._review_state is None:
                self._review_state = review_state(self.settings.redis_url, self.settings.data_dir)
            return self._review_state

    @property
    def chat(self) -> ChatModel | None:
        """The LLM, or None when no endpoint is configured (offline review)."""
        with self._lock:
            if not self._chat_built:
                self._chat = chat_from_settings(self.settings)
                self._chat_built = True
            return self._chat


_contexts: dict[int, WorkerContext] = {}
_contexts_lock = threading.Lock()


def context_for(settings: Settings) -> WorkerContext:
    """One context per settings object (i.e. per Celery app) in this process."""
    with _contexts_lock:
        ctx = _contexts.get(id(settings))
        if ctx is None:
            ctx = WorkerContext(settings)
            _contexts[id(settings)] = ctx
        return ctx


def close_contexts() -> None:
    """Release per-process resources (the embedded Qdrant lock above all) on shutdown."""
    with _contexts_lock:
        contexts = list(_contexts.values())
        _contexts.clear()
    for ctx in contexts:
        with ctx._lock:
            memory, github = ctx._memory, ctx._github
            ctx._memory = ctx._github = None
        if memory is not None:
            memory.close()
        if github is not None:
            github.close()
