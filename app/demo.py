"""Demo data for `make run`: a couple of programs with entities and notes."""
from __future__ import annotations


def seed_demo_data(account_uuid: str) -> None:
    from app.accounts.services import get_account, cli_actor
    from app.programs import services as programs

    account = get_account(account_uuid)
    actor = cli_actor(account)
    programs.create_program(actor, {"program_name": "Retail onboarding", "report_emails": ["alerts@example.com"]})
    programs.create_program(actor, {"program_name": "Corporate clients", "event_grouping": "grouped",
                                    "default_risk_level": "medium"})
