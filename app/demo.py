"""Demo data for `make run`: two programs with a few entities and notes, written through the services."""
from __future__ import annotations

DEMO_ENTITIES = [
    {"entity_type": "individual", "first_name": "Jane", "last_name": "Citizen", "birth_date": "1980-02-01",
     "reference_number": "CUST-1000", "address_line1": "1 George St", "address_suburb": "Sydney",
     "address_state": "NSW", "address_postcode": "2000", "address_country": "AU", "email1": "jane@example.com",
     "flags": ["pep"]},
    {"entity_type": "individual", "first_name": "Mohammed", "last_name": "Al-Rashid", "reference_number": "CUST-1001",
     "address_country": "AE", "risk_level": "medium"},
    {"entity_type": "individual", "first_name": "Olga", "last_name": "Petrova", "reference_number": "CUST-1002",
     "address_country": "RU", "risk_level": "high", "flags": ["sanction", "adverse_media"]},
    {"entity_type": "business", "business_name": "Acme Pty Ltd", "business_number_type": "au_abn",
     "business_number": "51 824 753 556", "address_country": "AU", "address_state": "VIC"},
    {"entity_type": "vessel", "vessel_name": "MV Northern Star"},
]


def seed_demo_data(account_uuid: str) -> None:
    from app.accounts.services import cli_actor, get_account
    from app.entities import services as entities
    from app.programs import services as programs

    actor = cli_actor(get_account(account_uuid))
    retail = programs.create_program(actor, {"program_name": "Retail onboarding",
                                             "report_emails": ["alerts@example.com"]})
    programs.create_program(actor, {"program_name": "Corporate clients", "event_grouping": "grouped",
                                    "default_risk_level": "medium"})
    for fields in DEMO_ENTITIES:
        entities.create_entity(actor, retail.uuid, fields)
