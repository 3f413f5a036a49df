"""flask lists accept|reject LIST:N: the operator's decision on a held list version from the command line, through
the same service as the portal's Lists page (`app/lists/services.py`)."""
from __future__ import annotations

import sys

import click
from flask.cli import with_appcontext

from app.core.actor import Actor
from app.core.errors import DomainError
from app.core.transactions import transaction
from app.lists import services
from app.screening import cli as screening_cli

# The command line is the platform operator (`billing.is_operator`); it acts for no account.
OPERATOR = Actor(account_id=0, kind="system", id=None, uuid=None, name="cli", role="admin", via="cli")


def _fail(message: str) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(2)


def _parse(version: str) -> tuple[str, int]:
    name, _, number = version.rpartition(":")
    if not name or not number.lstrip("v").isdigit():
        _fail(f"{version!r}: give the held version as LIST:N (e.g. ofac_sdn:4)")
    return name, int(number.lstrip("v"))


def _decide(version: str, accept: bool):
    name, number = _parse(version)
    try:
        with transaction():
            return services.decide_held_version(OPERATOR, name, number, accept)
    except DomainError as exc:
        _fail(exc.message)


@click.command("accept")
@click.argument("version")
@click.option("--no-index", is_flag=True, help="Do not build the screening index here (the background job does).")
@with_appcontext
def accept_version(version: str, no_index: bool) -> None:
    """Apply a held version (LIST:N, as `flask lists import` printed it). The screening index holding it is built
    here (unless --no-index) and by a background job, which then tells the monitors (they re-screen)."""
    summary = _decide(version, True)
    click.echo(f"{summary.list_name}: version {summary.version} accepted and applied, {summary.records} records"
               f" (+{summary.added} added, ~{summary.changed} changed, -{summary.removed} removed)")
    if not no_index:
        screening_cli._build_index()


@click.command("reject")
@click.argument("version")
@with_appcontext
def reject_version(version: str) -> None:
    """Drop a held version (LIST:N): the list stays as it is."""
    summary = _decide(version, False)
    click.echo(f"{summary.list_name}: version {summary.version} rejected; the list stays at its current version")


def register(group: click.Group) -> None:
    """Add the commands to `flask lists` (the group of the engine's commands, `app/screening/cli.py`)."""
    group.add_command(accept_version)
    group.add_command(reject_version)
