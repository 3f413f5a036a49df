"""The ID types: one entry per kind of identity document an ID check verifies, and every list of ID types reads it
(the launch schema and OpenAPI document, the account's entitlements, the default prices, the portal's form, the
provider choice).

An entry says what the type is called (`name`, the API's `id_type`; `label`, its `id_type_name`), which service
verifies it (`check_type`, the API's "underlying implementation", with its own label), its `data` schema
(`providers.id_data`), which of its fields are document numbers (`numbers`: never returned, logged or kept in
clear), which of the spec's six `details` shapes it answers with (`shape`), and which implementation answers it for
sandbox and live accounts. Import-light, as the check-type registry: no Flask, no database.

The shapes (spec, "Adhoc ID check"): 1 `dvs` (the Australian Document Verification Service: result code Y/N/D),
4 `nz_licence` (NZTA), 5 `nz_passport` (DIA), 6 `payroll_super`. Shapes 2 (`match_results`) and 3
(`person_match`) belong to data-source checks (credit bureau, electoral roll) no ID type of v1 uses; the response
schema still accepts them (docs/decisions.md, "ID types").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.core.errors import Invalid
from app.core.schemas import RequestSchema, field_errors
from app.providers import id_data
from app.providers.base import ProviderNotConfigured
from app.providers.id_base import CHECK_TYPE_LABELS, DIA, DVS, NZTA, PAYROLL, SHAPES
from app.providers.id_sandbox import SandboxIdProvider
from app.providers.registry import Product, Providers, Registry, _load



@dataclass(frozen=True)
class IdType(Product):
    check_type: str = DVS
    data: type[RequestSchema] | None = None
    numbers: tuple[str, ...] = ()                     # document numbers: masked, encrypted, never returned
    agency: str | None = None                         # DVS originating agency (per state for state documents)
    needs_oac: bool = True                            # verified under the account's DVS identity (OAC)

    @property
    def check_type_name(self) -> str:
        return CHECK_TYPE_LABELS[self.check_type]

    def provider(self, *, sandbox: bool, settings: dict[str, Any]):
        built = (self.providers.sandbox if sandbox else self.providers.live)(self.name, settings)
        return built if built is not None else _Unconfigured(self)

    @property
    def shape(self) -> str:
        return SHAPES[self.check_type]


class _Unconfigured:
    """A live account's ID type whose upstream has no gateway configured here: the check answers 503."""

    name = "unconfigured"

    def __init__(self, entry: "IdType"):
        self.id_type = entry.name
        self.entry = entry

    def verify(self, data: dict[str, Any], request) -> None:
        raise ProviderNotConfigured(f"no {self.entry.check_type_name} gateway is configured for live accounts")


def _sandbox(id_type: str, settings: dict[str, Any]):
    return SandboxIdProvider(ID_TYPES[id_type])


def _live(path_setting: str, default: str | None = None):
    def build(id_type: str, settings: dict[str, Any]):
        path = (settings.get("ID_PROVIDER_CLASSES") or {}).get(id_type) or default
        if not path or not settings.get(path_setting):
            return None
        return _load(path)(settings, id_type=id_type)  # one adapter class answers several ID types
    return build


def _providers(setting: str, default: str) -> Providers:
    return Providers(sandbox=_sandbox, live=_live(setting, default))


_DVS = _providers("DVS_GATEWAY_URL", "app.providers.dvs:DvsProvider")
_NZ = _providers("NZ_GATEWAY_URL", "app.providers.nz_identity:NzIdentityProvider")
_PAYROLL = _providers("PAYROLL_GATEWAY_URL", "app.providers.payroll:PayrollProvider")
NAMES = (("first_name",), ("last_name",), ("dob",))

ID_TYPES: Registry[IdType] = Registry(
    IdType("drivers_licence", "Driver Licence", 2, NAMES, _DVS, data=id_data.DriversLicence,
           numbers=("licence_number", "card_number"), agency="state"),
    IdType("passport", "Australian Passport", 2, NAMES, _DVS, data=id_data.Passport, numbers=("document_number",),
           agency="DFAT"),
    IdType("medicare", "Medicare Card", 2, NAMES, _DVS, data=id_data.Medicare, numbers=("card_number",),
           agency="SA"),
    IdType("visa", "Visa (foreign passport)", 2, NAMES, _DVS, data=id_data.Visa, numbers=("passport_number",),
           agency="DHA"),
    IdType("birth_certificate", "Birth Certificate", 2, NAMES, _DVS, data=id_data.BirthCertificate,
           numbers=("registration_number", "certificate_number"), agency="BDM"),
    IdType("centrelink", "Centrelink Concession Card", 2, NAMES, _DVS, data=id_data.Centrelink,
           numbers=("customer_reference_number",), agency="SA"),
    IdType("citizenship_certificate", "Citizenship Certificate", 2, NAMES, _DVS, data=id_data.Citizenship,
           numbers=("stock_number",), agency="DHA"),
    IdType("nz_drivers_licence", "NZ Driver Licence", 2, NAMES, _NZ, check_type=NZTA, data=id_data.NzDriversLicence,
           numbers=("licence_number",), needs_oac=False),
    IdType("nz_passport", "NZ Passport", 2, NAMES, _NZ, check_type=DIA, data=id_data.NzPassport,
           numbers=("passport_number",), needs_oac=False),
    IdType("payroll_super", "Payroll and Superannuation", 2, NAMES, _PAYROLL, check_type=PAYROLL,
           data=id_data.PayrollSuper, numbers=("member_number",), needs_oac=False),
)
# Entitlements and labels also know `idpass` (launched through /idpasses, priced per document step).
ID_TYPE_LABELS = {**ID_TYPES.labels(), "idpass": "IDPass"}


def validate_data(id_type: str, data: Any, prefix: str = "data.") -> RequestSchema:
    """The `data` of an ID check, validated by its type's schema; field errors keyed `data.<field>`."""
    schema = ID_TYPES[id_type].data
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        errors: dict[str, list[str]] = {}
        for err in exc.errors(include_url=False):
            found = (err.get("ctx") or {}).get("error")
            if isinstance(found, id_data.FieldErrors):
                for name, message in found.errors:
                    errors.setdefault(prefix + name, []).append(message)
        plain = field_errors(exc, prefix)
        for path, messages in plain.items():
            if path.rstrip(".") != prefix.rstrip(".") or not errors:
                errors.setdefault(path, []).extend(m for m in messages if m not in errors.get(path, []))
        raise Invalid(errors=errors) from None


def masked(id_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """The data as shown and kept in clear: every document number masked to its last 3 characters."""
    numbers = ID_TYPES[id_type].numbers
    return {k: (mask(v) if k in numbers and v else v) for k, v in data.items()}


def mask(value: str) -> str:
    value = str(value)
    keep = 3 if len(value) > 5 else 1
    return "•" * (len(value) - keep) + value[-keep:]


@dataclass(frozen=True)
class IdPassDocument:
    """A document a person may present in an IDPass step (`config.document_N` names these): the ID type that
    verifies it with its issuer, how its fields are captured on the phone (`mrz`: read from the machine-readable
    zone and confirmed; `ocr`: its printed fields read from the photo (`app.vision.cards`) and confirmed; `typed`:
    typed by the person from the document, with its photo kept), and whether it carries a portrait the selfie is
    compared with."""

    name: str
    label: str
    id_type: str
    reading: str            # mrz | ocr | typed
    has_photo: bool


IDPASS_DOCUMENTS: dict[str, IdPassDocument] = {d.name: d for d in (
    IdPassDocument("passport", "Australian passport", "passport", "mrz", True),
    IdPassDocument("licence", "Australian driver licence", "drivers_licence", "ocr", True),
    IdPassDocument("medicare", "Medicare card", "medicare", "ocr", False),
    IdPassDocument("visa", "Foreign passport with an Australian visa", "visa", "mrz", True),
    IdPassDocument("birth_certificate", "Australian birth certificate", "birth_certificate", "typed", False),
    IdPassDocument("centrelink", "Centrelink concession card", "centrelink", "typed", False),
    IdPassDocument("citizenship_certificate", "Australian citizenship certificate", "citizenship_certificate",
                   "typed", False),
    IdPassDocument("nz_passport", "New Zealand passport", "nz_passport", "mrz", True),
    IdPassDocument("nz_licence", "New Zealand driver licence", "nz_drivers_licence", "ocr", True),
)}
IDPASS_MAX_STEPS = 3
# The price table's IDPass products: one per number of document steps (DECISIONS: "priced by its document steps").
IDPASS_PRICES = {"idpass_1": 4, "idpass_2": 6, "idpass_3": 8}
IDPASS_PRICE_LABELS = {"idpass_1": "IDPass, 1 document step", "idpass_2": "IDPass, 2 document steps",
                       "idpass_3": "IDPass, 3 document steps"}


def idpass_product(steps: int) -> str:
    return f"idpass_{steps}"
