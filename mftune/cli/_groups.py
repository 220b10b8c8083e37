"""The command groups every CLI module attaches to."""

from __future__ import annotations

import warnings

import click


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings as ``Warning: ...`` lines on stderr (no source line quoted)."""
    click.echo(f"Warning: {message}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mftune", prog_name="mftune")
@click.pass_context
def main(ctx: click.Context) -> None:
    """mftune: hyperparameter tuning with multi-fidelity bandits."""
    shown = warnings.showwarning
    warnings.showwarning = _show_warning
    ctx.call_on_close(lambda: setattr(warnings, "showwarning", shown))


@main.group()
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
