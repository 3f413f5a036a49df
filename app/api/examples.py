"""One example per request and response schema of the OpenAPI document (tests/api/test_openapi_examples.py
checks every example against the pydantic model it illustrates, so they cannot drift)."""
from __future__ import annotations

from typing import Any

API_REFERENCE = "0b6f9a52-8a4e-4c55-9d3c-2f1e6a7b8c9d"
PROGRAM_UUID = "8f2d6c1e-3b4a-4f5e-9a7b-1c2d3e4f5a6b"
ENTITY_UUID = "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
NOTE_UUID = "7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f"
API_KEY_UUID = "2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6b"
WHEN = "2025-03-14T09:26:53.589793Z"

PROGRAM = {"uuid": PROGRAM_UUID, "program_number": "PRG-D3QVTVTVNNF", "program_name": "Retail onboarding",
           "status": "active", "report_emails": ["compliance@example.com"], "data_retention_months": 12,
           "event_grouping": "separate", "max_separate_events": 10, "default_risk_level": "low",
           "review_policy": "single", "strong_hit_score": 0.9, "created_at": WHEN, "updated_at": WHEN}
ENTITY = {"uuid": ENTITY_UUID, "entity_number": "ENT-DYEUMRYDHHR", "reference_number": "CUST-1001",
          "entity_type": "individual", "entity_name": "Jane Citizen", "first_name": "Jane", "middle_name": None,
          "last_name": "Citizen", "birth_date": "1980-05-17", "business_name": None, "business_number": None,
          "business_number_type": None, "vessel_name": None, "property_name": None,
          "address_line1": "1 George Street", "address_line2": None, "address_suburb": "Sydney",
          "address_state": "NSW", "address_postcode": "2000", "address_country": "AU", "phone1": "+61291234567",
          "phone2": None, "phone3": None, "phone4": None, "email1": "jane@example.com", "email2": None,
          "email3": None, "email4": None, "flags": ["pep"], "risk_level": "medium", "archived_at": None,
          "deleted_at": None, "program_uuid": PROGRAM_UUID, "created_at": WHEN, "updated_at": WHEN}
NOTE = {"uuid": NOTE_UUID, "note_number": "NTE-DKDJVPRHNMP", "note_text": "Called the customer; documents to follow.",
        "created_by": {"type": "api_key", "uuid": API_KEY_UUID, "label": "Onboarding service"},
        "is_immutable": False, "entity_uuid": ENTITY_UUID, "program_uuid": PROGRAM_UUID, "event_uuid": None,
        "archived_at": None, "created_at": WHEN, "updated_at": WHEN}

CHECK_UUID = "3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a"
EVENT_UUID = "9a0b1c2d-3e4f-4a5b-9c6d-7e8f9a0b1c2d"
PEP_CONFIG = {"search_type": "medium_search", "similarity_threshold": "80", "pep_countries": [],
              "sanction_countries": ["AU", "CA", "NZ", "GB", "US"], "max_results": 25,
              "pep_sanction_extended_result": True}
CHECK = {"uuid": CHECK_UUID, "check_number": "CHK-7NYCWVN4MF6", "check_type": "pep_sanction_check",
         "check_type_name": "PEP & Sanctions", "status": "complete", "failed_reason": None, "outcome": "warning",
         "check_summary": "1 potential match: 1 sanctions, 0 PEP.", "checked_at": WHEN,
         "data_summary": "Jane Citizen", "created_by": NOTE["created_by"], "parent_uuid": None,
         "config": PEP_CONFIG, "created_at": WHEN, "entity_uuid": ENTITY_UUID, "program_uuid": PROGRAM_UUID,
         "archived_at": None}
CHECK_DETAILS = {"subject": {"full_name": None, "first_name": "Jane", "middle_name": None, "last_name": "Citizen",
                             "dob": "1980-05-17", "business_name": None, "vessel_name": None,
                             "address_country": "AU"},
                 "config": {**PEP_CONFIG, "similarity_threshold": 80}, "results": [],
                 "list_versions": {"un_sc_sanctions": "12", "us_ofac_sdn": "31"}, "engine_version": "2.1.0"}
# A near miss (`GET /checks/{uuid}?near_misses=true`): the listed Jane CITIZEN, born two years before the subject:
# name 100%, date of birth -25 points, 75% against a threshold of 80%.
NEAR_MISS = {"uuid": "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f", "name": "Jane CITIZEN", "matched_name": "Jane CITIZEN",
             "similarity": 0.75, "is_pep": False, "is_sanctioned": True, "pep_matches": [],
             "sanction_matches": [{"programs": ["SDGT"], "authority": "US Treasury (OFAC)",
                                   "list_name": "us_ofac_sdn", "list_version": "31"}],
             "record": {"id": "OFAC-40123", "caption": "Jane CITIZEN", "schema": "Person",
                        "first_seen": "2024-02-01", "last_seen": "2025-03-13", "last_change": "2024-02-01"},
             "properties": {"birth_date": ["1978-05-17"], "gender": ["female"], "nationality": ["nz"],
                            "citizenship": [], "aliases": []},
             "explanation": {"query_name": "Jane Citizen", "matched_alias": "Jane CITIZEN", "alias_kind": "primary",
                             "name_score": 1.0, "alias_factor": 1.0,
                             "parts": [{"query": "jane", "matched": "jane", "score": 1.0, "weight": 0.62,
                                        "contribution": 0.62, "rule": "identical"},
                                       {"query": "citizen", "matched": "citizen", "score": 1.0, "weight": 1.0,
                                        "contribution": 1.0, "rule": "identical"}],
                             "qualifiers": [{"qualifier": "date_of_birth", "query": "1980-05-17",
                                             "listed": ["1978-05-17"], "outcome": "conflict", "effect": -0.25}],
                             "search_type": "medium_search", "list": "us_ofac_sdn", "list_version": "31"}}
EVENT = {"uuid": EVENT_UUID, "event_number": "EVT-DGN7T44RFMK", "status": "new", "check_type": "pep_sanction_check",
         "check_summary": CHECK["check_summary"], "check_response_index": 0, "check_result_ids": [160483806810503],
         "archived_at": None, "deleted_at": None, "entity_uuid": ENTITY_UUID, "program_uuid": PROGRAM_UUID,
         "check_uuid": CHECK_UUID, "notes_count": 1, "top_title": "Jane CITIZEN", "top_score": 0.92,
         "decision": None, "pending_approval": None, "reason": "match_changed",
         "changes": [{"field": "programmes", "label": "Sanction programmes", "before": "SDGT",
                      "after": "IRAN-EO13902; SDGT"}], "created_at": WHEN}
MONITOR_UUID = "1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5f"
MONITOR = {"uuid": MONITOR_UUID, "monitor_number": "MON-7NWEPMC6RCT",
           "monitor_name": "PEP and sanctions, all customers",
           "monitor_check_type": "pep_sanction_check", "monitor_check_type_name": "PEP and sanctions",
           "status": "active", "process_status": None, "process_status_comment": None, "schedule": "every_day",
           "schedule_name": "Every day", "config": PEP_CONFIG, "last_run_at": WHEN, "has_run_before": True,
           "next_run_at": "2025-03-15T02:00:00Z", "last_events_raised": 2, "program_uuid": PROGRAM_UUID,
           "created_at": WHEN, "updated_at": WHEN}
MONITOR_RUN = {"uuid": "6c7d8e9f-0a1b-4c2d-8e3f-4a5b6c7d8e9f", "monitor_uuid": MONITOR_UUID,
               "program_uuid": PROGRAM_UUID, "trigger": "manual",
               "mode": "all", "status": "processing", "check_type": "pep_sanction_check", "config": PEP_CONFIG,
               "entities_total": 12000, "entities_processed": 4000, "entities_skipped": 0, "checks_charged": 4000,
               "credits_charged": 4000, "events_raised": 2,
               "list_versions_before": {"ofac_sdn": "v3", "un_sc_sanctions": "v2"},
               "list_versions_after": {"ofac_sdn": "v3", "un_sc_sanctions": "v2"}, "engine_version": "3.5.0",
               "list_update": None, "scheduled_for": None, "started_at": WHEN, "ended_at": None, "error": None,
               "created_at": WHEN}
STATUS_CHANGE = {"from_status": "new", "to_status": "investigating", "changed_by": NOTE["created_by"],
                 "changed_at": WHEN, "reason": "Asked the customer for a certified passport copy.",
                 "api_reference": "0f1e2d3c-4b5a-4968-8776-655443322110"}

ID_CHECK_UUID = "6b7c8d9e-0f1a-4b2c-8d3e-4f5a6b7c8d9e"
ID_CHECK = {"uuid": ID_CHECK_UUID, "check_number": "IDC-7QPEAE4PTNW", "id_type": "drivers_licence",
            "id_type_name": "Driver Licence", "check_type": "dvs",
            "check_type_name": "Document Verification Service (DVS)", "outcome": "pass",
            "outcome_summary": "The issuer's record matches the details.",
            "data_summary": "Driver Licence, Jane Citizen, born 1980-05-17, no. •••••678, NSW", "checked_at": WHEN,
            "idpass": None, "recheck_of_uuid": None}
ID_CHECK_DETAIL = {"created_by": NOTE["created_by"],
                   "consent": {"obtained": True, "asserted_at": WHEN, "asserted_by": NOTE["created_by"],
                               "channel": "api", "wording_version": "2026-11"},
                   "verification_details": [{"field": "first_name", "value": "Jane"},
                                            {"field": "licence_number", "value": "•••••678"}],
                   "details": {"verification_result_code": "Y", "originating_agency_code": "RA-NSW",
                               "verification_request_number": "DVS8812345671", "additional_information": []}}
ID_CHECK_LISTED = {**ID_CHECK, "archived_at": None,
                   "program": {"uuid": PROGRAM_UUID, "program_name": "Retail onboarding"},
                   "entity": {"uuid": ENTITY_UUID, "entity_number": "ENT-DYEUMRYDHHR", "entity_name": "Jane Citizen"}}



IDPASS_UUID = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
IDPASS_LAUNCH = {
    "uuid": IDPASS_UUID, "source": "entity", "requester_name": "Bank of Examples", "check_liveness": True,
    "require_id_photo": False, "document_allowed_types": {"document_1": ["passport", "licence"],
                                                          "document_2": ["medicare"], "document_3": []},
    "link_validity_days": 7, "return_verification_images": True, "delivery_method": "sms",
    "idpass_link": "https://screening.example.com/v/pQ4vX0b3Zk9sJtq2WmR8yLcN1eHdA7Uf", "sent_at": WHEN,
    "created_at": WHEN, "detail_url": f"/idpasses/{IDPASS_UUID}",
    "id_check": {"type": "entity", "uuid": "6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e", "check_number": "IDC-7PJCJY969FA",
                 "url": "/id-checks/6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e"}}
IDPASS_REFS = {"program": {"uuid": PROGRAM_UUID, "program_name": "Retail onboarding"},
               "entity": {"uuid": ENTITY_UUID, "entity_number": "ENT-7C4A6A93TM3", "entity_name": "Jane Citizen"},
               "archived_at": None}
IDPASS_LISTED = {"uuid": IDPASS_UUID, "source": "entity", "status": "complete", "completed": True,
                 "verification_status": "passed", "requester_name": "Bank of Examples", "delivery_method": "sms",
                 "created_at": WHEN, "completed_at": WHEN, "expires_at": WHEN, "detail_url": f"/idpasses/{IDPASS_UUID}",
                 **IDPASS_REFS}
IDPASS = {
    **IDPASS_LAUNCH, **IDPASS_REFS, "idpass_link": None, "status": "complete", "completed": True,
    "verification_status": "passed", "verification_description": "Every document was verified with its issuer, "
    "the face matched each document's photo and the liveness challenge was passed.", "reasons": [],
    "requested_identity": {"first_name": "Jane", "middle_name": None, "last_name": "Citizen", "dob": "1980-05-17"},
    "requested_identity_mismatch": False, "id_photo_purpose": None, "return_url": "https://bank.example.com/onboarding",
    "privacy_policy_url": "https://bank.example.com/privacy", "dvs_oac": "OAC1", "delivery_phone": "0412345678",
    "opened_at": WHEN, "consent_given_at": WHEN,
    "consent": {"given": True, "wording_version": "idpass-2026-11", "language": "en",
                "wording": "I agree that Bank of Examples checks my identity documents with their issuers..."},
    "completed_at": WHEN, "expires_at": WHEN, "cancelled_at": None,
    "document_summary": {"document_1": {
        "document_type": "passport", "document_type_name": "Australian passport", "status": "verified", "attempts": 1,
        "read_method": "mrz", "mrz_valid": True,
        "fields": {"first_name": "JANE", "last_name": "CITIZEN", "dob": "1980-05-17",
                   "document_number": "••••••567", "expiry_date": "2031-04-02"},
        "changes": [], "verification": {"outcome": "pass", "check_type": "dvs", "result_code": "Y"},
        "face": {"compared": True, "similarity": 0.91, "threshold": 0.73, "matched": True, "face_occluded": False}}},
    "validation_summary": {"document_verified": True, "face_matched": True, "identity_consistent": True,
                           "requested_identity_match": True,
                           "liveness": {"checked": True, "passed": True, "confidence": 0.86, "attempts": 1,
                                        "reasons": []}},
    "log": [{"at": WHEN, "event": "created", "message": "Created by Onboarding service; 1 document step, liveness, "
                                                         "link valid 7 days."}],
    "images": [{"type": "document_1", "url": f"/idpasses/{IDPASS_UUID}/images/document_1",
                "content_type": "image/jpeg", "sha256": "9f2c" + "0" * 60, "width": 1600, "height": 1130,
                "captured_at": WHEN}],
    "pdf_url": f"/idpasses/{IDPASS_UUID}/pdf", "created_by": NOTE["created_by"]}

WEBHOOK_ENDPOINT = {"uuid": "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "url": "https://hooks.example.com/screening",
                    "description": "Case management", "event_types": ["check.completed", "event.created"],
                    "enabled": True, "disabled_reason": None, "disabled_at": None, "failing_since": None,
                    "secret_rotated_until": None, "created_at": WHEN, "updated_at": WHEN}
WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
WEBHOOK_DELIVERY = {"uuid": "1d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a", "webhook_id": "msg_2b3c4d5e6f7a4b8c9d0e1f2a3b4c5d6e",
                    "endpoint_uuid": WEBHOOK_ENDPOINT["uuid"], "event_type": "check.completed", "status": "delivered",
                    "next_attempt_at": None, "last_error": None, "delivered_at": WHEN, "created_at": WHEN,
                    "attempts": [{"attempted_at": WHEN, "trigger": "event", "status_code": 503, "latency_ms": 41,
                                  "response_headers": {"Retry-After": "5"}, "response_excerpt": "busy", "error": None},
                                 {"attempted_at": WHEN, "trigger": "retry", "status_code": 200, "latency_ms": 12,
                                  "response_headers": {"Content-Length": "0"}, "response_excerpt": None,
                                  "error": None}]}

EXAMPLES: dict[str, dict] = {
    # request bodies
    "ProgramCreate": {"program_name": "Retail onboarding", "report_emails": ["compliance@example.com"]},
    "ProgramUpdate": {"status": "paused"},
    "EntityIn": {"entity_type": "individual", "first_name": "Jane", "last_name": "Citizen",
                 "birth_date": "1980-05-17", "reference_number": "CUST-1001", "address_country": "AU"},
    "EntityUpdate": {"risk_level": "high", "flags": ["pep", "sanction"]},
    "NoteCreate": {"note_text": "Called the customer; documents to follow."},
    "NoteUpdate": {"note_text": "Documents received and checked."},
    # responses
    "ProgramOut": PROGRAM,
    "ProgramDeletedOut": {**PROGRAM, "deleted_at": WHEN},
    "EntityOut": ENTITY,
    "EntityDeletedOut": {**ENTITY, "deleted_at": WHEN},
    "EntityBulkOut": {"program_uuid": PROGRAM_UUID, "created_count": 2,
                      "entity_uuids": [ENTITY_UUID, "6b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"]},
    "HeavyJobOut": {"uuid": "0b7e6c1a-2f4d-4e8b-9a3c-5d6e7f8a9b0c", "kind": "entity_import", "status": "running",
                    "progress": 40, "message": "Validated 4,000 of 8,000 rows.", "target_uuid": PROGRAM_UUID,
                    "errors": None, "result": None, "result_url": None, "attempts": 1, "created_at": WHEN,
                    "started_at": WHEN, "finished_at": None, "expires_at": None},
    "NoteOut": NOTE,
    "NoteDeletedOut": {**NOTE, "deleted_at": WHEN},
    # checks, events, credit
    "EntityCheckLaunch": {"check_types": ["pep_sanction_check"],
                          "config": {"pep_sanction_check": {"similarity_threshold": "90"}}},
    "AdhocCheckLaunch": {"check_types": ["pep_sanction_check"],
                         "data": {"first_name": "Jane", "last_name": "Citizen", "dob": "1980-05-17"}},
    "EventUpdate": {"status": "closed_dismissed", "note": "Different date of birth: not the listed person."},
    "LaunchOut": {"uuid": CHECK_UUID, "check_number": "CHK-7NYCWVN4MF6", "check_type": "pep_sanction_check",
                  "status": "pending", "config": PEP_CONFIG, "detail_url": f"/checks/{CHECK_UUID}",
                  "children": []},
    "CheckOut": CHECK,
    "CheckShowOut": {**CHECK, "results_overview": [{"title": "Sanctions match: Jane CITIZEN (92%)", "status": "fail",
                                                    "alert_ids": ["160483806810503"]}],
                     "children": [], "details": CHECK_DETAILS, "near_misses": [NEAR_MISS]},
    "AdhocCheckOut": {k: v for k, v in CHECK.items() if k not in ("entity_uuid", "program_uuid", "archived_at")},
    "AdhocCheckShowOut": {**{k: v for k, v in CHECK.items() if k not in ("entity_uuid", "program_uuid", "archived_at")},
                          "results_overview": [{"title": "No PEP or sanctions match", "status": "pass",
                                                "alert_ids": []}], "children": [], "details": CHECK_DETAILS},
    "EventOut": EVENT,
    "EventShowOut": {**EVENT, "status": "investigating",
                     "notes": [{"uuid": NOTE_UUID, "note_text": STATUS_CHANGE["reason"], "created_by": NOTE["created_by"],
                                "is_immutable": True, "created_at": WHEN, "updated_at": WHEN}],
                     "status_history": [STATUS_CHANGE], "approvals": []},
    "MonitorCreate": {"monitor_name": "PEP and sanctions, all customers", "monitor_check_type": "pep_sanction_check",
                      "status": "active", "schedule": "every_day",
                      "config": {"search_type": "medium_search", "similarity_threshold": "80"}},
    "MonitorUpdate": {"schedule": "weekdays", "config": {"similarity_threshold": "90"}},
    "MonitorRunRequest": {"mode": "new"},
    "ProgramRunRequest": {"check_type": "pep_sanction_check", "entity_uuids": [ENTITY_UUID]},
    "MonitorOut": MONITOR,
    "MonitorDeletedOut": {**MONITOR, "deleted_at": WHEN},
    "MonitorRunOut": MONITOR_RUN,
    "ListOut": {"list": "ofac_sdn", "title": "OFAC Specially Designated Nationals", "publisher": "US Treasury (OFAC)",
                "kind": "sanction", "jurisdiction": "US", "version": 3, "records": 18342,
                "versions": [{"version": 4, "status": "held", "imported_at": WHEN, "published_at": "2025-03-14",
                              "records": 11005, "added": 0, "changed": 2, "removed": 7339,
                              "source": "https://sanctionslist.ofac.treas.gov/"}]},
    "ListVersionOut": {"version": 3, "status": "applied", "imported_at": WHEN, "published_at": "2025-03-13",
                       "records": 18342, "added": 12, "changed": 30, "removed": 4,
                       "source": "https://sanctionslist.ofac.treas.gov/"},
    "ApprovalDecision": {"decision": "approve", "note": "Agreed: the date of birth differs."},
    "CreditOut": {"balance": 9876, "prices": {"pep_sanction_check": 1, "phone_check": 1, "court_check": 3}},
    "IdCheckRun": {"id_type": "drivers_licence", "consent_obtained": True,
                   "data": {"first_name": "Jane", "last_name": "Citizen", "birth_date": "1980-05-17", "state": "NSW",
                            "licence_number": "12345678", "card_number": "2012345678"}},
    "IdCheckRecheck": {"consent_obtained": True},
    "AdhocIdCheckDeletedOut": {**ID_CHECK, "created_by": NOTE["created_by"]},
    "AdhocIdCheckOut": {**ID_CHECK, **ID_CHECK_DETAIL},
    "IdCheckOut": ID_CHECK_LISTED,
    "IdCheckShowOut": {**ID_CHECK_LISTED, **ID_CHECK_DETAIL},
    "IdPassLaunch": {"data": {"first_name": "Jane", "last_name": "Citizen", "dob": "1980-05-17"}, "oac": "OAC1",
                     "config": {"link_validity_days": 7, "check_liveness": True, "document_1": ["passport", "licence"],
                                "document_2": ["medicare"], "require_id_photo": False,
                                "return_verification_images": True, "delivery_method": "sms",
                                "delivery_phone": "0412345678", "return_url": "https://bank.example.com/onboarding"}},
    "IdPassLaunchOut": IDPASS_LAUNCH,
    "IdPassListItem": IDPASS_LISTED,
    "IdPassOut": IDPASS,
    "EndpointCreate": {"url": "https://hooks.example.com/screening", "event_types": ["check.completed", "event.created"],
                       "description": "Case management"},
    "EndpointUpdate": {"event_types": ["check.completed", "check.failed", "event.created", "event.updated"]},
    "EndpointOut": WEBHOOK_ENDPOINT,
    "EndpointSecretOut": {**WEBHOOK_ENDPOINT, "secret": WEBHOOK_SECRET},
    "DeliveryOut": WEBHOOK_DELIVERY,
    "ReplayWindow": {"since": "2025-03-14T00:00:00Z", "until": "2025-03-15T00:00:00Z"},
    "ReplayOut": {"replayed": 12, "skipped_in_flight": 0},
    "TestPing": {"endpoint_uuid": WEBHOOK_ENDPOINT["uuid"], "message": "A test delivery: signed and sent as every "
                                                                         "webhook is."},
    "LedgerEntryOut": {"uuid": "4e5f6a7b-8c9d-4e0f-9a1b-2c3d4e5f6a7b", "kind": "charge", "amount": -1,
                       "balance_after": 9876, "check_uuid": CHECK_UUID, "reason": "pep_sanction_check CHK-7NYCWVN4MF6",
                       "created_by": {"type": "api_key", "uuid": API_KEY_UUID, "name": "Onboarding service"},
                       "created_at": WHEN},
}

# Bodies that are not JSON: the bulk upload's CSV (as a text/csv body, or as the multipart field `file`), and the
# first bytes of a PDF report (a binary file: what a client saves or shows in a PDF viewer).
CSV_EXAMPLE = "entity_type,vessel_name\nvessel,Sea Breeze\n"
MEDIA_EXAMPLES: dict[str, Any] = {"text/csv": CSV_EXAMPLE,
                                  "application/json": {"program_uuid": PROGRAM_UUID, "created_count": 1,
                                                       "entity_uuids": [ENTITY_UUID]},
                                  "multipart/form-data": {"file": CSV_EXAMPLE},
                                  "application/pdf": "%PDF-1.7\n%…binary: the check report (A4, with its content hash)",
                                  "image/jpeg": "…binary: a JPEG image, without metadata",
                                  "image/png": "…binary: a PNG image, without metadata"}

ERROR_EXAMPLES: dict[int, dict] = {
    400: {"message": "The given data was invalid.", "errors": {"program_name": ["This field is required."]}},
    401: {"message": "Missing, malformed, unknown or revoked API key. Send 'Authorization: Bearer <key>'."},
    402: {"message": "Insufficient credit."},
    403: {"message": "This action is not permitted."},
    404: {"message": "Not found."},
    405: {"message": "Method not allowed."},
    409: {"message": "The request conflicts with the current state of the record."},
    413: {"message": "The request body is too large: at most 1 MiB (1,048,576 bytes) is accepted. Split the data "
                     "into smaller requests."},
    415: {"message": "This endpoint takes a JSON body: send it with 'Content-Type: application/json' "
                     "(got text/plain)."},
    422: {"message": "This Idempotency-Key was used with a different request."},
    429: {"message": "Too many requests. Retry after the time given in Retry-After."},
    503: {"message": "Background processing is unavailable; nothing was saved. Retry after the time given in "
                     "Retry-After."},
}
