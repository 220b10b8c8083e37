"""Run a training script in any language as one pull, and read back its score.

A run gets its configuration

* on the command line: ``--name=value`` appended for every parameter (and the
  fidelity, unless it is passed by environment only), or substituted into
  ``{name}`` placeholders written in the command; and
* always in the environment: ``MFTUNE_PARAMS`` (JSON), ``MFTUNE_FIDELITY``
  (the fidelity value), ``MFTUNE_FIDELITY_NAME``, ``MFTUNE_FIDELITY_INDEX``,
  ``MFTUNE_TRIAL_DIR`` (a working directory per configuration that persists
  across fidelities, for the script's own checkpoints), ``MFTUNE_RESULT_FILE``,
  ``MFTUNE_ARM``, ``MFTUNE_PULL_ID`` and ``MFTUNE_SEED`` (a seed derived from the
  study seed, the arm, the fidelity and how often that pair ran before, so a
  stochastic script is reproducible and an interrupted study resumes exactly).

A run reports by writing ``{"score": ..., "cost": ...}`` (cost optional) as
JSON to ``MFTUNE_RESULT_FILE`` — :func:`report` does it for Python scripts —
or by printing a last line ``mftune-score: <float>``. The cost is the measured
wall time unless the script reports one. A non-zero exit, a timeout or no
parseable score makes a failed pull whose error text starts with its cause --
``command not found: NAME``, ``exit code N`` (or ``killed by SIGNAL``) with
the last stderr line, ``no score: ...`` quoting the last output line,
``score is not finite: nan``, ``timed out after T s`` -- followed by the end of
stderr.

A run starts through :mod:`mftune.scripts.reaper`, which leads the run's process
group and kills the whole group when mftune dies, even by SIGKILL (Linux:
``PR_SET_PDEATHSIG``), so no script, nor anything it started, outlives the
process that would record it.

Commands run without a shell (argument lists), in their own process group so
a timeout kills the whole group; no parameter value is ever interpreted by a
shell.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from ..engine.driver import Evaluator, Outcome, Outcomes, parallel_map
from ..policies.base import Pulls
from ..study.outcomes import PullRecord, stand_in_rewards
from .reporting import SCORE_PREFIX, report

__all__ = ["ScriptEvaluator", "ScriptResult", "format_value", "pull_seed", "report"]

TAIL_CHARS = 2000


def format_value(value) -> str:
    """Command-line text of a parameter value (shortest round-trip for floats)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass
class ScriptResult:
    """What one run of the script gave.

    ``score`` is ``None`` unless ``status == "done"``; ``error`` holds the
    reason and the tail of stderr for failed runs.
    """

    score: float | None
    cost: float
    status: str
    error: str | None = None
    stdout_tail: str = ""


def _tail(text: str, n: int = TAIL_CHARS) -> str:
    return text[-n:]


class ScriptEvaluator(Evaluator):
    """Evaluate configurations by running a command, one process per pull.

    Parameters
    ----------
    command : sequence of str
        The command and its arguments (no shell), e.g. ``["python", "train.py"]``.
    configs : sequence of dict
        The configuration of each arm.
    fidelity_name : str
    fidelity_values : sequence
        The value passed for each fidelity index.
    trials_dir : str or Path
        Parent of the per-configuration working directories ``arm-00007``.
    pass_mode : {"auto", "args", "placeholders"}, default="auto"
        ``"args"``: append ``--name=value`` for every parameter; ``"placeholders"``:
        only substitute ``{name}`` in the command; ``"auto"``: substitute, and
        append the names the command has no placeholder for.
    fidelity_pass : {"arg", "env"}, default="arg"
        Whether the fidelity is passed like a parameter or by environment only.
    timeout : float, optional
        Seconds before a run is killed (its whole process group) and recorded
        as ``timed-out``.
    direction : {"maximize", "minimize"}, default="maximize"
        Used by :meth:`evaluate_one` to turn scores into rewards.
    error_score : float, optional
        Score :meth:`evaluate_one` reports for failed runs (default: the worst
        score it has seen, or 0).
    seed : int, default=0
        Study seed, the root of ``MFTUNE_SEED``.
    n_jobs : int, optional
        Parallel runs per batch when used through the driver.
    n_splits : int, default=2
        Repeats of a (configuration, fidelity) pair the calibration runs to
        measure the noise (each repeat has its own ``MFTUNE_SEED``).
    env : dict, optional
        Extra environment variables.
    cwd : str or Path, optional
        Working directory of the runs (default: the current one), so relative
        paths in the command keep working; each configuration's own directory
        is ``MFTUNE_TRIAL_DIR``.
    """

    def __init__(self, command: Sequence[str], configs: Sequence[dict], fidelity_name: str,
                 fidelity_values: Sequence, trials_dir, *, pass_mode: str = "auto",
                 fidelity_pass: str = "arg", timeout: float | None = None,
                 direction: str = "maximize", error_score: float | None = None, seed: int = 0,
                 n_jobs: int | None = None, env: dict | None = None, cwd=None,
                 n_splits: int = 2):
        super().__init__(n_jobs=n_jobs)
        if not command:
            raise ValueError("command must be a non-empty list of arguments")
        if pass_mode not in ("auto", "args", "placeholders"):
            raise ValueError(f"pass_mode must be 'auto', 'args' or 'placeholders'; "
                             f"got {pass_mode!r}")
        if fidelity_pass not in ("arg", "env"):
            raise ValueError(f"fidelity_pass must be 'arg' or 'env'; got {fidelity_pass!r}")
        if direction not in ("maximize", "minimize"):
            raise ValueError(f"direction must be 'maximize' or 'minimize'; got {direction!r}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be > 0 or None; got {timeout!r}")
        self.command = [str(c) for c in command]
        self.configs = list(configs)
        self.fidelity_name = fidelity_name
        self.fidelity_values = list(fidelity_values)
        self.trials_dir = Path(trials_dir)
        self.pass_mode, self.fidelity_pass = pass_mode, fidelity_pass
        self.timeout, self.direction, self.error_score = timeout, direction, error_score
        self.seed, self.env = seed, dict(env or {})
        self.cwd = None if cwd is None else str(cwd)
        self._procs: set[subprocess.Popen] = set()
        self._worst = np.inf
        # what the engine's Search reads (mftune.engine.search): the runs as records
        self.candidates = self.configs
        self.metric = "score"
        self.n_splits = int(n_splits)
        self.phase = "search"
        self.records: list[PullRecord] = []
        self.next_repeat = np.zeros((len(self.fidelity_values), len(self.configs)), np.int64)

    def argv(self, config: dict, fidelity_value) -> list[str]:
        """The argument list of one run (placeholders substituted, options appended)."""
        values = dict(config)
        if self.fidelity_pass == "arg":
            values[self.fidelity_name] = fidelity_value
        subst = {k: format_value(v) for k, v in values.items()}
        subst.setdefault(self.fidelity_name, format_value(fidelity_value))
        pattern = re.compile(r"\{(" + "|".join(re.escape(k) for k in subst) + r")\}")
        used: set[str] = set()

        def sub(m):
            used.add(m.group(1))
            return subst[m.group(1)]

        args = [pattern.sub(sub, a) for a in self.command]
        if self.pass_mode != "placeholders":
            args += [f"--{k}={format_value(v)}" for k, v in values.items()
                     if self.pass_mode == "args" or k not in used]
        return args

    def trial_dir(self, arm: int) -> Path:
        """The persistent working directory of a configuration."""
        return self.trials_dir / f"arm-{int(arm):05d}"

    def run_pull(self, arm: int, fidelity: int, *, pull_id: int | str = "x", attempt: int = 1,
                 repeat: int = 0, config: dict | None = None) -> ScriptResult:
        """Run the command for one pull and parse its score.

        Parameters
        ----------
        arm, fidelity : int
        pull_id : int or str
            Used in the result file name and ``MFTUNE_PULL_ID``.
        attempt : int
            Attempt number (a pull re-run after a crash gets a fresh result file).
        repeat : int
            How often this (configuration, fidelity) pair ran before
            (``MFTUNE_REPEAT``); with the study seed it sets ``MFTUNE_SEED``.
        config : dict, optional
            The arm's configuration when it is not in :attr:`configs` yet (a
            service's worker gets a wave's new candidates with their pulls).

        Returns
        -------
        ScriptResult
        """
        config = self.configs[arm] if config is None else config
        fval = self.fidelity_values[fidelity]
        tdir = self.trial_dir(arm)
        tdir.mkdir(parents=True, exist_ok=True)
        result_file = tdir / f"result-{pull_id}-{attempt}.json"
        result_file.unlink(missing_ok=True)
        env = dict(os.environ)
        env.update(self.env)
        env.update({
            "MFTUNE_PARAMS": json.dumps(config), "MFTUNE_FIDELITY": format_value(fval),
            "MFTUNE_FIDELITY_NAME": self.fidelity_name, "MFTUNE_FIDELITY_INDEX": str(fidelity),
            "MFTUNE_TRIAL_DIR": str(tdir.resolve()), "MFTUNE_RESULT_FILE":
                str(result_file.resolve()), "MFTUNE_ARM": str(arm),
            "MFTUNE_PULL_ID": str(pull_id), "MFTUNE_REPEAT": str(repeat),
            "MFTUNE_SEED": str(self.pull_seed(arm, fidelity, repeat)),
        })
        args = self.argv(config, fval)
        start = time.perf_counter()
        problem = _unstartable(args[0], self.cwd, env.get("PATH"))
        if problem:
            return ScriptResult(None, time.perf_counter() - start, "failed", problem)
        try:  # through the reaper, which takes the run's process group down with mftune
            proc = subprocess.Popen([sys.executable, "-m", "mftune.scripts.reaper", *args],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env, cwd=self.cwd,
                                    start_new_session=True, text=True, errors="replace",
                                    preexec_fn=partial(_die_with_parent, os.getpid()))
        except OSError as exc:
            return ScriptResult(None, time.perf_counter() - start, "failed",
                                _start_error(args[0], self.cwd, exc))
        self._procs.add(proc)
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            return ScriptResult(None, time.perf_counter() - start, "timed-out",
                                f"timed out after {self.timeout:g} s (the time limit of a "
                                f"run; killed){_stderr_tail(err)}", _tail(out, 500))
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        finally:
            self._procs.discard(proc)
            if proc.poll() is None:
                _kill_group(proc)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            return ScriptResult(None, wall, "failed", _exit_error(proc.returncode, err),
                                _tail(out, 500))
        score, cost, problem = _parse_result(result_file, out)
        result_file.unlink(missing_ok=True)
        if problem:
            return ScriptResult(None, wall, "failed",
                                f"{problem}{_stderr_tail(err, say_empty=False)}",
                                _tail(out, 500))
        return ScriptResult(score, wall if cost is None else cost, "done", None, _tail(out, 500))

    def __getstate__(self):
        # sent to joblib/dask workers: runs in progress here stay here
        state = dict(self.__dict__)
        state["_procs"] = set()
        return state

    def pull_seed(self, arm: int, fidelity: int, repeat: int) -> int:
        """``MFTUNE_SEED`` of a pull: from the study seed, the arm, the fidelity and the repeat."""
        return pull_seed(self.seed, arm, fidelity, repeat)

    def assign(self, pulls: Pulls) -> np.ndarray:
        """The repeat index of each pull of a batch, in batch order (advances the counters)."""
        repeats = np.empty(len(pulls), dtype=np.int64)
        for i, (a, f) in enumerate(pulls):
            repeats[i] = self.next_repeat[f, a]
            self.next_repeat[f, a] += 1
        return repeats

    def add_candidates(self, n: int) -> None:
        """Make room for ``n`` candidates appended to :attr:`candidates` (a new wave)."""
        pad = np.zeros((len(self.fidelity_values), int(n)), dtype=np.int64)
        self.next_repeat = np.hstack([self.next_repeat, pad])

    def run_rows(self, rows, repeats) -> Iterator[ScriptResult]:
        """Run pulls ``(arm, fidelity, pull_id, attempt, position)`` at once, through joblib.

        Used by a shared study (:class:`~mftune.study.recording.RecordingEvaluator`)
        for the pulls this worker claimed: in threads (each run is a child
        process), or on a dask cluster under ``joblib.parallel_config(backend="dask")``.
        Yields each result, in the order of ``rows``, as soon as it and those
        before it have ended, so the caller records a run before the others end.
        """
        args = [(a, f, pid, att, int(repeats[pos])) for a, f, pid, att, pos in rows]
        return iter(parallel_map(self._run_args, args, self.n_jobs, prefer="threads",
                                 lazy=True))

    #: :class:`~mftune.study.recording.RecordingEvaluator` may pass stored results (``known=``).
    accepts_known = True

    def evaluate(self, pulls: Pulls, known: dict[int, dict] | None = None,
                 repeats: np.ndarray | None = None) -> Outcomes:
        """Run a batch (the positions not in ``known``) and turn it into rewards.

        Locally in threads (each run is its own process, so threads suffice);
        under ``joblib.parallel_config(backend="dask")`` on the dask workers,
        which must see the command and its working directory. Rewards are
        assigned here, in batch order, by the one failed-pull rule
        (:func:`~mftune.study.outcomes.stand_in_rewards`): a failed run tells
        ``error_score`` if given, else the lowest reward seen.

        Parameters
        ----------
        pulls : Pulls
        known : dict, optional
            ``{position: {"score", "cost", "status", "error"}}`` of pulls that
            already ran (a resumed study, or another worker's share).
        repeats : ndarray, optional
            The repeat indices of the batch, when :meth:`assign` already gave them.
        """
        known = known or {}
        repeats = self.assign(pulls) if repeats is None else repeats
        todo = [i for i in range(len(pulls)) if i not in known]
        args = [(int(pulls.arms[i]), int(pulls.fidelities[i]), f"{pulls.arms[i]}-"
                 f"{pulls.fidelities[i]}-{repeats[i]}", 1, int(repeats[i])) for i in todo]
        ran = parallel_map(self._run_args, args, self.n_jobs, prefer="threads")
        results = dict(known)
        for i, res in zip(todo, ran, strict=True):
            results[i] = {"score": res.score, "cost": res.cost, "status": res.status,
                          "error": res.error}
        sign = 1.0 if self.direction == "maximize" else -1.0
        rewards = np.full(len(pulls), np.nan)
        status, errors, costs, info = [], [], np.zeros(len(pulls)), []
        for i, (a, f) in enumerate(pulls):
            r = results[i]
            ok = r["status"] == "done" and r["score"] is not None
            if ok:
                rewards[i] = sign * float(r["score"])
            elif self.error_score is not None:
                rewards[i] = sign * float(self.error_score)
            costs[i] = float(r["cost"] or 0.0)
            status.append(r["status"])
            errors.append(r["error"])
            info.append({"repeat": int(repeats[i])})
            self.records.append(PullRecord(
                int(a), int(f), int(repeats[i]), {"score": r["score"] if ok else np.nan},
                costs[i], 0.0, r["status"], r["error"], self.phase))
        rewards, self._worst = stand_in_rewards(rewards, self._worst)
        return Outcomes(rewards, costs, status, errors, info)

    def _run_args(self, arm, fidelity, pull_id, attempt, repeat) -> ScriptResult:
        return self.run_pull(arm, fidelity, pull_id=pull_id, attempt=attempt, repeat=repeat)

    def evaluate_one(self, arm: int, fidelity: int, point=None) -> Outcome:
        """Run one pull for the driver (through :meth:`evaluate`)."""
        out = self.evaluate(Pulls(np.array([arm]), np.array([fidelity])))
        return Outcome(float(out.rewards[0]), float(out.costs[0]), out.status[0], out.errors[0])

    def kill_all(self) -> None:
        """Kill the process groups of all runs in progress (on Ctrl+C)."""
        for proc in list(self._procs):
            _kill_group(proc)

    # hooks of the engine's Search: nothing to do for scripts
    def acknowledge(self) -> None:
        """Nothing to acknowledge: a run keeps no state between pulls."""

    def after_batch(self, pulls, outcomes, policy) -> None:
        """Driver callback: nothing to drop (scripts keep their own trial directories)."""

    def release(self, pulls) -> None:
        """Nothing to give back: a script study ends on Ctrl+C, and its resume re-derives
        the repeat indices from the stored batches."""


def pull_seed(seed: int | None, arm: int, fidelity: int, repeat: int) -> int:
    """``MFTUNE_SEED`` of a pull: from the study seed, the arm, the fidelity and the repeat."""
    ss = np.random.SeedSequence([int(seed or 0), int(arm), int(fidelity), int(repeat)])
    return int(ss.generate_state(1)[0] % 2**31)


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the run's process group (the run is its leader: its children die with it)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                      ctypes.c_ulong]
    return prctl


_PRCTL = _libc_prctl()  # looked up here, not in the forked child
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """In the reaper, before exec: get SIGTERM when mftune dies, even by SIGKILL (Linux).

    With ``start_new_session`` the run leads its own process group, which a
    timeout, Ctrl+C or SIGTERM kills as a whole; for the one death mftune
    cannot act on, the reaper (:mod:`mftune.scripts.reaper`) kills the group.
    """
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # the reaper kills its group
        if os.getppid() != parent:  # mftune died before the prctl: do not run orphaned
            os._exit(137)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _stderr_tail(err: str, n_lines: int = 20, *, say_empty: bool = True) -> str:
    """``"; stderr ends: <last line>"`` and the last lines of stderr (or that it was empty)."""
    last = _last_line(err)
    if not last:
        return "; no stderr output" if say_empty else ""
    tail = _tail("\n".join(err.rstrip().splitlines()[-n_lines:]))
    return f"; stderr ends: {last[:300]}\nstderr tail:\n{tail}"


def _unstartable(name: str, cwd: str | None, path: str | None) -> str | None:
    """Why ``name`` cannot be started from ``cwd`` (checked before the reaper starts it)."""
    if cwd is not None and not Path(cwd).is_dir():
        return f"working directory not found: {cwd}"
    if os.sep in name:
        target = Path(cwd or ".") / name
        if not target.exists():
            return f"command not found: {name}"
        if not os.access(target, os.X_OK) or target.is_dir():
            return f"command not executable: {name} (permission denied)"
        return None
    if shutil.which(name, path=path) is None:
        return f"command not found: {name}"
    return None


def _start_error(name: str, cwd: str | None, exc: OSError) -> str:
    """Why the run did not start once :func:`_unstartable` found nothing wrong with it."""
    return f"cannot start {name}: {exc.strerror or exc}"


def _exit_error(code: int, err: str) -> str:
    """A non-zero exit: its code (or signal) and the end of stderr."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        head = f"killed by {name} (exit code {code})"
    elif code == 127:
        head = "exit code 127 (command not found)"
    elif code == 126:
        head = "exit code 126 (command not executable)"
    else:
        head = f"exit code {code}"
    return head + _stderr_tail(err)


def _parse_result(path: Path, stdout: str) -> tuple[float | None, float | None, str | None]:
    """Score and cost from the result file, else from the last ``mftune-score:`` line.

    The third item says what went wrong (``None`` when a score was read):
    what was expected, and the output that was there instead.
    """
    cost = None
    if path.exists() and path.stat().st_size:
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text)
        except (ValueError, OSError) as exc:
            return None, None, (f"result file is not valid JSON ({exc}); expected "
                                f'{{"score": <number>}} in MFTUNE_RESULT_FILE')
        if not isinstance(data, dict) or "score" not in data:
            return None, None, (f'result file must hold {{"score": <number>}}; it holds '
                                f"{_tail(text.strip(), 200)!r}")
        score, cost = data["score"], data.get("cost")
        if cost is not None and not _is_finite(cost) or (cost is not None and cost < 0):
            return None, None, f"reported cost is not a non-negative number: {cost!r}"
        where = "in the result file"
    else:
        lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
        score_lines = [ln for ln in lines if ln.startswith(SCORE_PREFIX)]
        if not score_lines:
            last = f"last output line: {lines[-1][:300]!r}" if lines else "no output at all"
            return None, None, (f"no score: write {{\"score\": x}} to MFTUNE_RESULT_FILE or "
                                f"print a last line '{SCORE_PREFIX} <float>'; {last}")
        line = score_lines[-1]
        text = line[len(SCORE_PREFIX):].strip()
        try:
            score = float(text)
        except ValueError:
            return None, None, (f"unparseable score {text!r}: expected '{SCORE_PREFIX} "
                                f"<float>'; the line was {line[:300]!r}")
        where = f"in the line {line[:300]!r}"
    if isinstance(score, (int, float)) and not isinstance(score, bool) \
            and not math.isfinite(score):
        return None, None, f"score is not finite: {float(score)!r} ({where})"
    if not _is_finite(score):
        return None, None, f"score is not a number: {score!r} ({where})"
    return float(score), (None if cost is None else float(cost)), None


def _is_finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
