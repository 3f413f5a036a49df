"""Portal forms (Flask-WTF): they render fields and carry the CSRF token. Business validation is the
services' (the API's pydantic schemas); their field errors are put back on these fields by
`app.portal.base.apply_errors`. Each form turns its input into the same plain dict the API would send."""
from __future__ import annotations

from typing import Any

from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from wtforms import (BooleanField, EmailField, PasswordField, SelectField, SelectMultipleField, StringField,
                     TextAreaField)
from wtforms.validators import DataRequired, Email, Length
from wtforms.widgets import CheckboxInput, ListWidget

from app.core.actor import ROLES
from app.programs.models import REVIEW_POLICY_LABELS

try:  # WTForms 3.3+: choices as SelectChoice (tuples are deprecated)
    from wtforms.fields.choices import SelectChoice

    def options(pairs) -> list:
        return [SelectChoice(str(value), label) for value, label in pairs]
except ImportError:  # pragma: no cover - older WTForms
    def options(pairs) -> list:
        return [(str(value), label) for value, label in pairs]


RETENTION_LABELS = [(0, "No retention"), (1, "1 month"), (3, "3 months"), (6, "6 months"), (12, "12 months"),
                    (24, "2 years"), (36, "3 years"), (48, "4 years"), (60, "5 years"), (72, "6 years"),
                    (84, "7 years")]
RISK_CHOICES = [("", "No risk assigned"), ("low", "Low"), ("medium", "Medium"), ("high", "High")]


def _text(value: Any) -> str | None:
    """Form text as the API would receive it: trimmed, blank means null."""
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def _int_or_raw(value: Any) -> Any:
    """Digits become an integer; anything else goes to the schema as typed, which reports it."""
    value = _text(value)
    if value is None:
        return None
    return int(value) if value.lstrip("-").isdigit() else value


class LoginForm(FlaskForm):
    # in the API's words (core.schemas), not the library's
    email = EmailField("E-mail", validators=[DataRequired("This field is required."),
                                             Email("Must be a valid e-mail address."),
                                             Length(max=320, message="Must be at most %(max)d characters.")])
    password = PasswordField("Password", validators=[DataRequired("This field is required."),
                                                     Length(max=256, message="Must be at most %(max)d characters.")])
    remember = BooleanField("Keep me signed in")


class TimeZoneForm(FlaskForm):
    time_zone = StringField("Time zone", render_kw={"list": "time-zones", "autocomplete": "off",
                                                    "placeholder": "e.g. Australia/Sydney"})


class PasswordChangeForm(FlaskForm):
    current_password = PasswordField("Current password", render_kw={"autocomplete": "current-password"})
    new_password = PasswordField("New password", render_kw={"autocomplete": "new-password"})


class ConfirmForm(FlaskForm):
    """A button-only form (delete, archive, revoke, restore): it carries the CSRF token."""


class ProgramForm(FlaskForm):
    program_name = StringField("Program name", render_kw={"maxlength": 255, "autocomplete": "off"})
    status = SelectField("Status", choices=options([("active", "Active"), ("paused", "Paused")]), default="active")
    report_emails = TextAreaField("Report e-mails", render_kw={"rows": 3, "spellcheck": "false"},
                                  description="Up to 5 addresses, one per line. They receive event reports.")
    data_retention_months = SelectField("Data retention", choices=options(RETENTION_LABELS),
                                        default="12")
    event_grouping = SelectField("Event grouping", default="separate", choices=options([
        ("separate", "Separate: one event per finding"), ("grouped", "Grouped: one event per entity")]))
    max_separate_events = StringField("Max events per check", default="10",
                                      render_kw={"inputmode": "numeric", "type": "number", "min": 5, "max": 100},
                                      description="5 to 100. Ignored when events are grouped.")
    default_risk_level = SelectField("Default risk level", choices=options(RISK_CHOICES), default="low",
                                     description="Pre-filled on new entities.")
    review_policy = SelectField("Review of closings", default="single", choices=options(REVIEW_POLICY_LABELS.items()),
        description="Under a second review, closing an event waits until another person approves it.")
    strong_hit_score = StringField("Strong hit from (%)", default="90",
                                   render_kw={"inputmode": "numeric", "type": "number", "min": 50, "max": 100},
                                   description="A hit scoring at least this, or on a sanctions list, is strong: "
                                               "dismissing it needs a reason.")

    def load(self, program) -> None:
        """Fill the form from a program (GET of the edit page)."""
        self.program_name.data = program.program_name
        self.status.data = program.status
        self.report_emails.data = "\n".join(program.report_emails or [])
        self.data_retention_months.data = str(program.data_retention_months)
        self.event_grouping.data = program.event_grouping
        self.max_separate_events.data = "" if program.max_separate_events is None else str(program.max_separate_events)
        self.default_risk_level.data = program.default_risk_level or ""
        self.review_policy.data = program.review_policy
        self.strong_hit_score.data = str(round(program.strong_hit_score * 100))

    def to_data(self, *, include_status: bool = True) -> dict[str, Any]:
        raw_emails = (self.report_emails.data or "").replace(",", "\n").replace(";", "\n")
        data: dict[str, Any] = {
            "program_name": (self.program_name.data or "").strip(),
            "report_emails": [line.strip() for line in raw_emails.splitlines() if line.strip()],
            "data_retention_months": _int_or_raw(self.data_retention_months.data),
            "event_grouping": self.event_grouping.data,
            "default_risk_level": _text(self.default_risk_level.data),
            "review_policy": self.review_policy.data,
            "strong_hit_score": (lambda v: v / 100 if isinstance(v, int) else v)(
                _int_or_raw(self.strong_hit_score.data)),
        }
        if self.event_grouping.data != "grouped":
            data["max_separate_events"] = _int_or_raw(self.max_separate_events.data)
        if include_status:
            data["status"] = self.status.data
        return data


class StatusForm(FlaskForm):
    status = SelectField("Status", choices=options([("active", "Active"), ("paused", "Paused"), ("archived", "Archived")]))


class NoteForm(FlaskForm):
    note_text = TextAreaField("Note", render_kw={"rows": 3, "maxlength": 5000})

    def to_data(self) -> dict[str, Any]:
        return {"note_text": self.note_text.data or ""}


class CsvImportForm(FlaskForm):
    file = FileField("CSV file", render_kw={"accept": ".csv,text/csv"})


class MultiCheckboxField(SelectMultipleField):
    widget = ListWidget(prefix_label=False)
    option_widget = CheckboxInput()


class UserCreateForm(FlaskForm):
    """Inviting a user: the person sets their own password through the e-mailed link."""
    email = EmailField("E-mail", render_kw={"autocomplete": "off"})
    role = SelectField("Role", choices=options((r, r.capitalize()) for r in ROLES), default="analyst")


class InvitationAcceptForm(FlaskForm):
    password = PasswordField("Password", render_kw={"autocomplete": "new-password"},
                             description="At least 10 characters, letters mixed with digits or symbols.")
    confirm = PasswordField("The same password again", render_kw={"autocomplete": "new-password"})


class UserRoleForm(FlaskForm):
    role = SelectField("Role", choices=options((r, r.capitalize()) for r in ROLES))


class RateLimitForm(FlaskForm):
    per_minute = StringField("Requests a minute per key", render_kw={"inputmode": "numeric", "autocomplete": "off"})


class AccountTimeZoneForm(FlaskForm):
    timezone = StringField("Schedules time zone", render_kw={"list": "time-zones", "autocomplete": "off",
                                                             "placeholder": "e.g. Europe/London"})


class DvsIdentityForm(FlaskForm):
    """A DVS identity (OAC): accounts.services.add_dvs_identity checks the fields."""
    oac_code = StringField("Code (OAC)", render_kw={"maxlength": 64, "autocomplete": "off",
                                                    "placeholder": "e.g. OAC-123456"})
    requester_name = StringField("Requester name", render_kw={"maxlength": 255, "autocomplete": "organization",
                                                              "placeholder": "e.g. Bar Bank of Wombats"})
    privacy_policy_url = StringField("Privacy policy", render_kw={"maxlength": 1024, "inputmode": "url",
                                                                  "placeholder": "https://…"})


class ApiKeyForm(FlaskForm):
    label = StringField("Label", render_kw={"maxlength": 255, "autocomplete": "off",
                                            "placeholder": "e.g. Onboarding service (production)"})


# ---------------------------------------------------------------- entities

ENTITY_TYPE_LABELS = {"individual": "Individual", "business": "Business", "vessel": "Vessel", "property": "Property"}
BUSINESS_NUMBER_TYPES = [("", "—"), ("au_abn", "ABN (Australia)"), ("au_acn", "ACN (Australia)"),
                         ("uk_crn", "Company number (UK)"), ("other", "Other")]
FLAG_LABELS = {"sanction": "Sanction", "pep": "PEP", "adverse_media": "Adverse media", "fraud": "Fraud",
               "hardship": "Hardship", "bankruptcy": "Bankruptcy", "deceased": "Deceased",
               "court_actions": "Court actions", "deregistered": "Deregistered",
               "external_administration": "External administration"}
from app.entities.schemas import TYPE_FIELDS  # noqa: E402  (one list of per-type fields, the schema's)
SHARED_FIELDS = ("reference_number", "address_line1", "address_line2", "address_suburb", "address_state",
                 "address_postcode", "address_country", "phone1", "phone2", "phone3", "phone4",
                 "email1", "email2", "email3", "email4", "risk_level")


def _countries() -> list[tuple[str, str]]:
    import pycountry
    return options([("", "—")] + sorted(((c.alpha_2, c.name) for c in pycountry.countries), key=lambda c: c[1]))


class EntityForm(FlaskForm):
    reference_number = StringField("Reference number", render_kw={"maxlength": 255, "autocomplete": "off"},
                                   description="Your own identifier; unique within the program.")
    first_name = StringField("First name", render_kw={"maxlength": 255, "autocomplete": "off"})
    middle_name = StringField("Middle name", render_kw={"maxlength": 255, "autocomplete": "off"})
    last_name = StringField("Last name", render_kw={"maxlength": 255, "autocomplete": "off"})
    birth_date = StringField("Date of birth", render_kw={"type": "date"})
    business_name = StringField("Business name", render_kw={"maxlength": 255, "autocomplete": "off"})
    business_number_type = SelectField("Business number type", choices=options(BUSINESS_NUMBER_TYPES))
    business_number = StringField("Business number", render_kw={"maxlength": 64, "autocomplete": "off"},
                                  description="ABN 11 digits, ACN 9 digits, UK 8 letters or digits.")
    vessel_name = StringField("Vessel name", render_kw={"maxlength": 255, "autocomplete": "off"})
    property_name = StringField("Property name", render_kw={"maxlength": 255, "autocomplete": "off"})
    address_line1 = StringField("Address line 1", render_kw={"maxlength": 255})
    address_line2 = StringField("Address line 2", render_kw={"maxlength": 255})
    address_suburb = StringField("Suburb / city", render_kw={"maxlength": 255})
    address_state = StringField("State", render_kw={"maxlength": 64, "list": "au-states"},
                                description="For Australia: ACT, NSW, NT, QLD, SA, TAS, VIC or WA.")
    address_postcode = StringField("Postcode", render_kw={"maxlength": 16})
    address_country = SelectField("Country", choices=[])
    phone1 = StringField("Phone 1", render_kw={"type": "tel", "maxlength": 64})
    phone2 = StringField("Phone 2", render_kw={"type": "tel", "maxlength": 64})
    phone3 = StringField("Phone 3", render_kw={"type": "tel", "maxlength": 64})
    phone4 = StringField("Phone 4", render_kw={"type": "tel", "maxlength": 64})
    email1 = StringField("E-mail 1", render_kw={"type": "email", "maxlength": 320})
    email2 = StringField("E-mail 2", render_kw={"type": "email", "maxlength": 320})
    email3 = StringField("E-mail 3", render_kw={"type": "email", "maxlength": 320})
    email4 = StringField("E-mail 4", render_kw={"type": "email", "maxlength": 320})
    risk_level = SelectField("Risk level", choices=options(RISK_CHOICES))
    flags = MultiCheckboxField("Flags", choices=options(FLAG_LABELS.items()))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.address_country.choices = _countries()

    def load(self, entity) -> None:
        for name in TYPE_FIELDS[entity.entity_type] + SHARED_FIELDS:
            value = getattr(entity, name)
            getattr(self, name).data = "" if value is None else (value.isoformat() if hasattr(value, "isoformat")
                                                                 else str(value))
        self.flags.data = list(entity.flags or [])

    def to_data(self, entity_type: str) -> dict[str, Any]:
        """The fields of this entity type and the shared ones, as the API body (blank = null)."""
        data: dict[str, Any] = {name: _text(getattr(self, name).data) for name in TYPE_FIELDS.get(entity_type, ())}
        for name in SHARED_FIELDS:
            data[name] = _text(getattr(self, name).data)
        data["flags"] = list(self.flags.data or [])
        return data


# ---------------------------------------------------------------- webhooks

def webhook_type_choices() -> list:
    """The event types an endpoint subscribes to, as the registry names and labels them (the test delivery is sent
    on request to one endpoint, whatever it subscribes to: not a choice)."""
    from app.webhooks.registry import EVENT_TYPES, TEST
    return options((kind.name, kind.label) for kind in EVENT_TYPES.values() if kind.name != TEST)


class WebhookEndpointForm(FlaskForm):
    """A webhook endpoint: webhooks.services.create_endpoint / update_endpoint check the fields (and the URL's
    addresses)."""
    url = StringField("URL", render_kw={"maxlength": 2048, "inputmode": "url", "autocomplete": "off",
                                        "spellcheck": "false", "placeholder": "https://hooks.example.com/screening"})
    description = StringField("Description", render_kw={"maxlength": 500, "autocomplete": "off",
                                                        "placeholder": "e.g. Case management (production)"})
    event_types = MultiCheckboxField("Event types", choices=[])

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.event_types.choices = webhook_type_choices()

    def load(self, endpoint) -> None:
        self.url.data = endpoint.url
        self.description.data = endpoint.description or ""
        self.event_types.data = list(endpoint.event_types or [])

    def to_data(self) -> dict[str, Any]:
        return {"url": (self.url.data or "").strip(), "description": _text(self.description.data),
                "event_types": list(self.event_types.data or [])}


_DATETIME_LOCAL = {"type": "datetime-local", "style": (  # the text inputs' look (app.css leaves this type out)
    "width: 100%; height: 34px; padding: 0 10px; border: 1px solid var(--border-strong); "
    "border-radius: var(--radius-sm); background: var(--surface); color: var(--text); font: 14px/1.4 var(--font);")}


class WebhookReplayForm(FlaskForm):
    """Replay an endpoint's failed deliveries created in [since, until): times in the user's zone."""
    since = StringField("From", render_kw=_DATETIME_LOCAL)
    until = StringField("Until", render_kw=_DATETIME_LOCAL, description="Empty: until now.")
