"""Demo data for `make run`: two programs with a few entities and notes, written through the services."""
from __future__ import annotations

from app.accounts.services import add_dvs_identity, cli_actor, get_account
from app.checks import services as checks
from app.entities import services as entities
from app.extensions import db
from app.programs import services as programs
from app.screening import store
from app.screening.records import DEMO_KIND, ListInfo, ListRecord, Name, ParsedList

DEMO_ENTITIES = [
    {"entity_type": "individual", "first_name": "Jane", "last_name": "Citizen", "birth_date": "1980-02-01",
     "reference_number": "CUST-1000", "address_line1": "1 George St", "address_suburb": "Sydney",
     "address_state": "NSW", "address_postcode": "2000", "address_country": "AU", "email1": "jane@example.com",
     "phone1": "+61 412 345 678",
     "flags": ["pep"]},
    {"entity_type": "individual", "first_name": "Mohammed", "last_name": "Al-Rashid", "reference_number": "CUST-1001",
     "address_country": "AE", "risk_level": "medium"},
    {"entity_type": "individual", "first_name": "Anatol", "last_name": "Grevskiy", "reference_number": "CUST-1002",
     "birth_date": "1966-04-12", "address_country": "CY", "risk_level": "high", "flags": ["sanction"]},
    {"entity_type": "business", "business_name": "Acme Pty Ltd", "business_number_type": "au_abn",
     "business_number": "51 824 753 556", "address_country": "AU", "address_state": "VIC"},
    {"entity_type": "vessel", "vessel_name": "MV Northern Star"},
]


def demo_list():
    """A small invented sanctions list (no real person), so that the demo has a screening hit with or without
    the real lists (`flask lists import` / `flask lists update`). Its kind, DEMO_KIND, keeps it to the demo
    account: every other account's checks never match it nor name it in their `list_versions` and PDFs."""
    info = ListInfo(name="demo_sanctions", title="Demo sanctions list (invented names)", publisher="Demo",
                    kind=DEMO_KIND, jurisdiction="au")
    records = [
        ListRecord(id="demo-1", schema="Person", caption="Anatol GREVSKIY", names=[Name("GREVSKIY, Anatol", "alias"),
                                                                                    Name("Anatoly Grevsky", "alias")],
                   birth_dates=["1966-04-12"], countries=["cy"], topics=["sanction"],
                   sanctions=[{"programs": ["DEMO-1"], "authority": "Demo", "reason": "Invented for the demo"}]),
        ListRecord(id="demo-2", schema="Organization", caption="Northwind Shadow Trading LLC", topics=["sanction"],
                   sanctions=[{"programs": ["DEMO-2"], "authority": "Demo"}]),
    ]
    return ParsedList(info, records, source="app/demo.py")


def seed_demo_data(account_uuid: str) -> None:

    account = get_account(account_uuid)
    account.is_demo = True  # the demo's invented list is screened for this account only
    actor = cli_actor(account)
    # A DVS identity, so that "Check a document" verifies Australian documents (sandbox answers) in the demo.
    add_dvs_identity(actor, oac_code="DEMO-OAC", requester_name="Demo Compliance Pty Ltd",
                     privacy_policy_url="https://example.com/privacy")
    retail = programs.create_program(actor, {"program_name": "Retail onboarding",
                                             "report_emails": ["alerts@example.com"]})
    programs.create_program(actor, {"program_name": "Corporate clients", "event_grouping": "grouped",
                                    "default_risk_level": "medium"})
    created = [entities.create_entity(actor, retail.uuid, fields) for fields in DEMO_ENTITIES]
    store.save_list(db.session, demo_list(), fmt="demo", source="app/demo.py", checksum="demo-v1")
    # Checks that run after the commit (in-process, or on the worker): one hit with an event, one clean.
    hit = next(e for e in created if e.last_name == "Grevskiy")
    checks.launch_entity_checks(actor, hit.uuid, {"check_types": ["pep_sanction_check"]})
    clean = next(e for e in created if e.last_name == "Citizen")
    checks.launch_entity_checks(actor, clean.uuid, {"check_types": ["pep_sanction_check", "phone_check"]})
