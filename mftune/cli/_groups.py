"""The command groups every CLI module attaches to.

Each sub-command lives in a module of this package that registers it on
:data:`main` or :data:`bench` when imported. The groups import that module
when the command is first asked for (:class:`LazyGroup`), so ``mftune tune``
or ``mftune worker`` do not load the benchmarks and their libraries.
"""

from __future__ import annotations

import importlib
import math
import warnings
from pathlib import Path

import click


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings as ``Warning: ...`` lines on stderr (no source line quoted)."""
    click.echo(f"Warning: {message}", err=True)


class LazyGroup(click.Group):
    """A click group whose commands are registered by modules imported on first use.

    Parameters
    ----------
    lazy : dict
        Command name -> the module of :mod:`mftune.cli` that registers it.
    """

    def __init__(self, *args, lazy: dict[str, str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in self.lazy:
            importlib.import_module(f"{__package__}.{self.lazy[name]}")
        return super().get_command(ctx, name)


_STUDY = {name: "study_info" for name in ("status", "export", "report")}
_SCRIPTS = {name: "tune" for name in ("tune", "resume", "worker")}
_GP = {name: "bench_gp" for name in ("mfgpucb-synthetic", "svm-magic", "kde",
                                     "mfgpucb-overhead")}


@click.group(cls=LazyGroup, lazy={"demo": "demo", "serve": "serve", **_STUDY, **_SCRIPTS},
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mftune", prog_name="mftune")
@click.pass_context
def main(ctx: click.Context) -> None:
    """mftune: hyperparameter tuning with multi-fidelity bandits."""
    shown = warnings.showwarning
    warnings.showwarning = _show_warning
    ctx.call_on_close(lambda: setattr(warnings, "showwarning", shown))


@main.group(cls=LazyGroup, lazy={
    "curves": "bench_curves", **_GP, "head-to-head": "bench_h2h", "iise-table1": "bench_iise",
    "lower-bound": "bench_lower_bound", "lucb-table3": "bench_lucb", "lucb-figure1": "bench_lucb",
    "mfgrad-paper": "bench_mfgrad", "mfucb-figure2": "bench_mfucb", "parallel": "bench_parallel",
    "tuner-vs-halving": "bench_tuner", "serve": "serve"})
def bench() -> None:
    """Reproduce the papers' experiments next to their published numbers."""


def parse_list(value: str, allowed: tuple[str, ...], option: str) -> list[str]:
    """Split a comma-separated option value and check every item is allowed."""
    items = [v.strip() for v in value.split(",") if v.strip()]
    bad = [v for v in items if v not in allowed]
    if bad or not items:
        raise click.BadParameter(
            f"{', '.join(bad) or 'empty'} not allowed; choose from {', '.join(allowed)}",
            param_hint=option,
        )
    return items


class Finite(click.FloatRange):
    """``click.FloatRange`` that also refuses nan and infinities."""

    def convert(self, value, param, ctx):
        out = super().convert(value, param, ctx)
        if not math.isfinite(out):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return out


class _NJobs(click.ParamType):
    """joblib's ``n_jobs``: a non-zero integer (``-1`` = all cores)."""

    name = "integer"

    def convert(self, value, param, ctx):
        try:
            n = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not an integer", param, ctx)
        if n == 0:
            self.fail("must be a non-zero integer (-1 = all cores, -2 = all but one...)",
                      param, ctx)
        return n


class _OutFile(click.ParamType):
    """A file written once the run is over: its folder must exist now."""

    name = "file"

    def convert(self, value, param, ctx):
        path = Path(value)
        if not path.parent.is_dir():
            self.fail(f"{value!r}: the folder {str(path.parent)!r} does not exist", param, ctx)
        if path.is_dir():
            self.fail(f"{value!r} is a folder", param, ctx)
        return str(path)


class _PlotFile(_OutFile):
    """A figure file: matplotlib installed, a format it writes, a folder that exists."""

    def convert(self, value, param, ctx):
        path = Path(super().convert(value, param, ctx))
        try:
            pyplot()
        except click.UsageError as exc:
            self.fail(exc.message, param, ctx)
        from matplotlib.backend_bases import FigureCanvasBase

        formats = FigureCanvasBase.get_supported_filetypes()
        if path.suffix.lstrip(".").lower() not in formats:
            self.fail(f"{value!r}: the file name must end in one of "
                      f"{', '.join('.' + f for f in sorted(formats))}", param, ctx)
        return str(path)


#: ``--n-jobs`` of every command.
N_JOBS = _NJobs()
#: ``--plot FILE`` of every command: checked before anything runs.
PLOT_FILE = _PlotFile()
#: ``--json FILE``, ``--save FILE``: written at the end, their folder checked at the start.
OUT_FILE = _OutFile()


def pyplot():
    """``matplotlib.pyplot`` with the Agg backend, or a usage error naming the extra."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise click.UsageError(
            "--plot needs matplotlib, which is not installed; pip install 'mftune[plot]'"
        ) from exc
    return plt
