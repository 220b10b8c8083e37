"""Run one script as the leader of its process group, and take the group down with mftune.

``python -m mftune.scripts.reaper COMMAND [ARGS...]`` is how a script study
starts each run: this process leads a new process group (the runner starts
it with ``start_new_session``) and asks the kernel for SIGTERM when mftune
dies, even by SIGKILL (``PR_SET_PDEATHSIG``, set by the runner before exec).
On SIGTERM it kills its whole group -- the script and anything the script
started (the children of a ``sh`` wrapper) -- so no run outlives the process
that would record it. It exits as the script did (the same code, or the same
signal). Standard library only: it costs one interpreter start per run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def _stop(signum, frame) -> None:  # pragma: no cover - runs when mftune dies
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """Run ``argv``; return its exit code (or die by the signal that killed it)."""
    signal.signal(signal.SIGTERM, _stop)
    try:
        child = subprocess.Popen(argv)
    except OSError as exc:
        print(f"mftune: cannot start {argv[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126
    code = child.wait()
    if code < 0:  # die the way the script died, so the runner reads the same signal
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
