"""The options each check type takes (`config.<check_type>` of a launch): keys, allowed values and the spec's
defaults ("POST /entities/{entity_uuid}/checks"), with the words people read for them.

One source: the launch schemas and the OpenAPI document (`checks.schemas`), the portal's run form
(`portal.checkforms`) and every place that shows a resolved config (check page, PDF, report e-mail, through
`providers.vocabulary.config_rows`) read these classes and labels. The check-type registry names which class
belongs to which check type."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from app.core.schemas import RequestSchema, StrictDate

SEARCH_TYPES = ("broad_search", "medium_search", "narrow_search")
SearchType = Literal[SEARCH_TYPES]


def _threshold(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


Threshold = Annotated[Literal["10", "20", "30", "40", "50", "60", "70", "80", "90", "100"],
                      BeforeValidator(_threshold)]
Switch = Literal["yes", "on_change", "no"]
Months = Literal["no", "1", "2", "3", "6", "12"]
BANNED_TYPES = ("afs_banned_disqualified", "banned_futures", "banned_securities", "credit_banned_disqualified",
                "disqualified_director", "disqualified_smsf", "ato_disqualified_trustee")
BannedType = Literal[BANNED_TYPES]


def country_codes(value: Any) -> Any:
    """A list of ISO 3166-1 alpha-2 codes, upper-cased, each once (anything else: a field error)."""
    if isinstance(value, list):
        out = []
        for item in value:
            if not isinstance(item, str) or len(item.strip()) != 2 or not item.strip().isalpha() \
                    or not item.strip().isascii():
                raise ValueError(f"{item!r} is not an ISO 3166-1 alpha-2 country code.")
            import pycountry
            if pycountry.countries.get(alpha_2=item.strip().upper()) is None:
                raise ValueError(f"{item!r} is not an ISO 3166-1 alpha-2 country code.")
            out.append(item.strip().upper())
        return list(dict.fromkeys(out))
    return value


Countries = Annotated[list[str], BeforeValidator(country_codes)]


class PepSanctionConfig(RequestSchema):
    search_type: SearchType = "medium_search"
    similarity_threshold: Threshold = "80"
    pep_countries: Countries = Field(default_factory=list, description="Empty: every PEP jurisdiction.")
    sanction_countries: Countries = Field(default_factory=lambda: ["AU", "CA", "NZ", "GB", "US"])
    max_results: Literal[10, 15, 20, 25, 50, 100] = 25
    pep_sanction_extended_result: bool = True


class BannedConfig(RequestSchema):
    search_type: SearchType = "medium_search"
    similarity_threshold: Threshold = "80"
    banned_types: list[BannedType] = Field(default_factory=list, description="Empty: every register.")


class CourtConfig(RequestSchema):
    listing: Literal["all", "civil", "criminal"] = "criminal"
    search_party: Literal["any", "plaintiff", "defendant"] = "defendant"


class BusinessConfig(RequestSchema):
    name_match: Literal["exact", "similar", "no"] = "similar"
    abn_active: Switch = "yes"
    acn_active: Switch = "yes"
    gst_registered: Switch = "yes"
    recent_documents: Months = "3"
    recent_business_names: Months = "3"


class UkBusinessConfig(RequestSchema):
    name_match: Literal["exact", "similar", "no"] = "similar"
    company_status: Switch = "yes"
    recent_filings: Months = "3"
    officer_changes: Months = "3"
    registered_address_change: Literal["on_change", "no"] = "on_change"
    sic_codes_change: Literal["on_change", "no"] = "on_change"


class RealEstateConfig(RequestSchema):
    date_from: StrictDate | None = Field(None, description="Only listings on or after this date; null: all.")


# ---------------------------------------------------------------- the words people read

# Each option key, as a label (the same key means the same thing in every check type).
OPTION_LABELS = {
    "search_type": "Search type", "similarity_threshold": "Similarity threshold", "pep_countries": "PEP countries",
    "sanction_countries": "Sanctions countries", "max_results": "Max results",
    "pep_sanction_extended_result": "Extended result (all record details)", "banned_types": "Registers",
    "listing": "Listing", "search_party": "Party", "name_match": "Name match", "abn_active": "ABN active",
    "acn_active": "ACN active", "gst_registered": "GST registered", "recent_documents": "Recent documents",
    "recent_business_names": "Recent business names", "company_status": "Company status",
    "recent_filings": "Recent filings", "officer_changes": "Officer changes",
    "registered_address_change": "Registered address change", "sic_codes_change": "SIC codes change",
    "date_from": "Listings from"}
# The unit of an option's value, when it has one: the form shows it after the label, the config rows after the
# value ("80%", "3 months").
OPTION_UNITS = {"similarity_threshold": "%", "recent_documents": "months", "recent_business_names": "months",
                "recent_filings": "months", "officer_changes": "months"}
# What an option's allowed values read as.
VALUE_LABELS = {
    "broad_search": "Broad search", "medium_search": "Medium search", "narrow_search": "Narrow search",
    "yes": "Yes", "no": "No", "on_change": "On change", "exact": "Exact", "similar": "Similar", "all": "All",
    "civil": "Civil", "criminal": "Criminal", "any": "Any", "plaintiff": "Plaintiff", "defendant": "Defendant",
    **{t: t.replace("_", " ").capitalize() for t in BANNED_TYPES}}
# What an empty list means, per option (the API's `[]`): never "none".
EMPTY_MEANS = {"pep_countries": "All jurisdictions", "sanction_countries": "All jurisdictions",
               "banned_types": "All registers", "date_from": "All listings"}
