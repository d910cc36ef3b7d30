"""Ray, only when asked for (`--ray [ADDRESS]`): a session on a cluster or a local Ray, tasks mapped over
items in input order with their retries counted, and what a worker builds once and keeps.

Nothing here imports Ray at module import: the default stays single-process and Ray-free.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, TypeVar

from pipeline.errors import ClusterError

log = logging.getLogger(__name__)

LOCAL = "local"
LOCAL_CPUS = 2
# A task whose worker process dies (killed, out of memory, a crashed native library) runs again this often.
MAX_RETRIES = 3
# Variables every worker needs so that nothing reaches the network at start-up (as the CLI sets them).
QUIET_ENV = ("LITELLM_LOCAL_MODEL_COST_MAP", "MLFLOW_DISABLE_TELEMETRY", "HF_HUB_OFFLINE", "OMP_NUM_THREADS")

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")
# (shared value, item, attempt number from 1) -> result; runs in a Ray worker
Task = Callable[[S, T, int], R]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class FanOut(Generic[R]):
    """Results in input order, and how many task attempts Ray repeated after a worker failed."""

    results: list[R]
    retries: int


def require_ray() -> ModuleType:
    """The ray module; ClusterError with the install command when it is not installed."""
    try:
        import ray
    except ImportError as exc:
        raise ClusterError("--ray needs Ray: pip install 'scoperag[scale]' (or `make setup`)") from exc
    return ray


def cluster_cpus() -> int:
    """CPUs of the Ray cluster this process is connected to (at least 1)."""
    return max(1, int(require_ray().cluster_resources().get("CPU", 1)))


@contextlib.contextmanager
def ray_session(address: str) -> Iterator[ModuleType]:
    """Ray connected to `address` while inside ('local': a new local Ray with 2 CPUs; else a cluster's
    address such as `ray://head:10001` or `auto`). A session already open in this process is reused and
    left open."""
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    env = {name: os.environ[name] for name in QUIET_ENV if name in os.environ}
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "configure_logging": False,
        "runtime_env": {"env_vars": env},
    }
    with contextlib.ExitStack() as stack:
        try:
            if address == LOCAL:
                stack.enter_context(loopback_only())
                ray.init(num_cpus=LOCAL_CPUS, **options)
            else:
                ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ClusterError(
                f"cannot start or reach Ray at {address!r}: {exc}; start the head with `ray start --head` "
                "or pass --ray local",
                address,
            ) from exc
        log.info("Ray session on %s: %s CPUs", address, ray.cluster_resources().get("CPU"))
        try:
            yield ray
        finally:
            ray.shutdown()


# Ray's control plane (GCS, raylet, object manager, every worker's gRPC server) binds to the node's address,
# which on Linux is the address other machines reach it on. A local Ray is told, as on a laptop, that this
# machine runs no cluster: its node address is then 127.0.0.1 and nothing listens on another interface.
_NO_CLUSTER = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


@contextlib.contextmanager
def loopback_only() -> Iterator[None]:
    """While inside, a Ray started by this process and every process it starts listen on 127.0.0.1 only."""
    import ray._private.ray_constants as constants  # read already if Ray was imported before

    previous = os.environ.get(_NO_CLUSTER), constants.ENABLE_RAY_CLUSTER
    os.environ[_NO_CLUSTER] = "0"  # read by each Ray process this one starts (GCS, raylet, workers, agents)
    constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if previous[0] is None:
            os.environ.pop(_NO_CLUSTER, None)
        else:
            os.environ[_NO_CLUSTER] = previous[0]
        constants.ENABLE_RAY_CLUSTER = previous[1]


def map_tasks(
    task: Task[S, T, R],
    shared: S,
    items: Sequence[T],
    *,
    progress: Progress | None = None,
    max_retries: int = MAX_RETRIES,
) -> FanOut[R]:
    """`task(shared, item, attempt)` for every item as one Ray task each (inside `ray_session`), results in
    input order. `shared` is stored once in the object store, not sent per task. A task whose worker dies is
    run again by Ray, up to `max_retries` times; ClusterError past that."""
    counted = Retries()
    results = []
    for done, result in enumerate(stream_tasks(task, shared, items, retries=counted, max_retries=max_retries), 1):
        results.append(result)
        if progress:
            progress(done, len(items))
    return FanOut(results, counted.count)


@dataclass
class Retries:
    """How many task attempts Ray repeated after worker failures (filled in when a stream ends)."""

    count: int = 0


def stream_tasks(
    task: Task[S, T, R],
    shared: S,
    items: Sequence[T],
    *,
    window: int | None = None,
    retries: Retries | None = None,
    max_retries: int = MAX_RETRIES,
) -> Iterator[R]:
    """As `map_tasks`, yielding each result in input order as soon as it and those before it are done, with
    at most `window` tasks submitted and not yet yielded (None: all at once)."""
    ray = require_ray()
    if not items:
        return
    attempts, call = _attempts(ray), uuid.uuid4().hex
    shared_ref = ray.put(shared)
    remote = ray.remote(max_retries=max_retries, retry_exceptions=False)(_run_attempt)
    limit = len(items) if window is None else max(1, window)
    submitted: list[Any] = []
    try:
        for index in range(len(items)):
            while len(submitted) < min(len(items), index + limit):
                position = len(submitted)
                submitted.append(remote.remote(task, shared_ref, items[position], (call, position), attempts))
            yield ray.get(submitted[index])
            submitted[index] = None  # yielded: its result may leave the object store
    except ray.exceptions.WorkerCrashedError as exc:
        raise ClusterError(f"a Ray worker died {max_retries + 1} times on one task: {exc}") from exc
    finally:
        for ref in submitted:
            if ref is not None:
                ray.cancel(ref)
        counted = int(ray.get(attempts.retries.remote(call)))
        if counted:
            log.warning("Ray ran %d task attempts again after worker failures", counted)
        if retries is not None:
            retries.count = counted


def _run_attempt(task: Task[S, T, R], shared: S, item: T, key: tuple[str, int], attempts: Any) -> R:
    import ray

    attempt = int(ray.get(attempts.begin.remote(key)))
    return task(shared, item, attempt)


class _Attempts:
    """Counts the attempts of each task, by (call, index): the driver cannot see Ray's own retries."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, int]] = Counter()

    def begin(self, key: tuple[str, int]) -> int:
        self.counts[key] += 1
        return self.counts[key]

    def retries(self, call: str) -> int:
        """Attempts past the first of the call's tasks; the call's counts are dropped."""
        mine = [key for key in self.counts if key[0] == call]
        repeated = sum(self.counts.pop(key) - 1 for key in mine)
        return repeated


_ATTEMPTS: dict[str, Any] = {}  # Ray job id -> its one attempts actor (starting an actor takes seconds)


def _attempts(ray: ModuleType) -> Any:
    """The attempts actor of this Ray session, started on first use."""
    job = str(ray.get_runtime_context().get_job_id())
    if job not in _ATTEMPTS:
        _ATTEMPTS.clear()
        _ATTEMPTS[job] = ray.remote(num_cpus=0)(_Attempts).remote()
    return _ATTEMPTS[job]


_KEPT: dict[Hashable, Any] = {}
_KEPT_LOCK = threading.Lock()


def kept(key: Hashable, build: Callable[[], R]) -> R:
    """`build()` made once per worker process for `key` and kept (an index, a program, a loaded model)."""
    with _KEPT_LOCK:
        if key not in _KEPT:
            _KEPT[key] = build()
        return _KEPT[key]  # type: ignore[no-any-return]
