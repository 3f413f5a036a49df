"""The check types: one entry per check type, and every list of check types reads it.

An entry says what the check type is called (`name`, the API's code; `label`, what people read, also the API's
`check_type_name`), what it costs by default, which subject keys it needs, which options it takes (its config
schema), whether it needs the screening index, which implementation answers it for sandbox and live accounts, and
whether monitors may run it. The launch schemas (`CheckType`, `LaunchConfig`), the entitlements of an account,
the default prices, the run form, the provider choice and the run itself all read this registry.

Adding a check type: one `Product` entry below, its provider class (and its sandbox answer in
`providers.sandbox` when it has a paid upstream), its config class in `providers.configs` if it takes options,
and its result partial in `templates/checks/_results.html` if the generic rendering of its details is not
enough (docs/checks.md). ID types will join as a second `Registry` of the same `Product` entries.

Import-light on purpose: no Flask, no database, and provider modules imported only when a provider is built,
so that the lowest domains (accounts, billing) read it at import time without a cycle.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterator, TypeVar

from app.core.schemas import RequestSchema
from app.core.subject import Subject, subject_key_label
from app.providers import configs
from app.providers.base import Provider, ProviderNotConfigured, ProviderResult, RunContext, sandbox_magic

Factory = Callable[[str, dict[str, Any]], Provider | None]


@dataclass(frozen=True)
class Providers:
    """Which implementation answers a check type: `sandbox(check_type, settings)` for sandbox accounts,
    `live(check_type, settings)` for live ones (None: no upstream is configured here, the check fails and is
    refunded)."""

    sandbox: Factory
    live: Factory
    ours: bool = False                               # our own implementation, real in both modes


@dataclass(frozen=True)
class Product:
    """One thing an account is entitled to and charged for (a check type; later an ID type)."""

    name: str
    label: str
    price: int                                       # default credits (the `check_prices` table overrides)
    needs: tuple[tuple[str, ...], ...]               # subject keys: at least one of each group
    providers: Providers
    config: type[RequestSchema] | None = None   # its options (`config.<name>` of a launch), if any
    uses_index: bool = False                         # answered over the screening index (lists loaded)
    monitorable: bool = False                        # monitors may run it (docs/checks.md)
    # How its results are shown: the macro of templates/checks/_results.html (and the PDF's matches section for
    # anything but "rows"): "hits" (a listed party beside the subject), "register_hits", or the generic "rows".
    results_view: str = "rows"

    @property
    def needs_text(self) -> str:
        """What it needs, for people: "Needs first name and last name and date of birth"."""
        return "Needs " + " and ".join(" or ".join(subject_key_label(k).lower() for k in group)
                                       for group in self.needs)

    def default_config(self) -> dict[str, Any] | None:
        return self.config().model_dump(mode="json") if self.config is not None else None

    def provider(self, *, sandbox: bool, settings: dict[str, Any]) -> Provider:
        built = (self.providers.sandbox if sandbox else self.providers.live)(self.name, settings)
        return built if built is not None else _Unconfigured(self.name)


P = TypeVar("P", bound=Product)


class Registry(Generic[P]):
    """Entries by name, in the spec's order. Iterating gives the names; `registry[name]` the entry."""

    def __init__(self, *entries: P, others: dict[str, str] | None = None):
        self._entries = {e.name: e for e in entries}
        self._others = dict(others or {})        # labels of codes that are not entries (a check `group`)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, name: str) -> P:
        try:
            return self._entries[name]
        except KeyError:
            raise ValueError(f"unknown check type {name!r}") from None

    def entries(self) -> list[P]:
        return list(self._entries.values())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def label(self, name: str) -> str:
        entry = self._entries.get(name)
        return entry.label if entry is not None else self._others.get(name, name)

    def labels(self) -> dict[str, str]:
        return {name: e.label for name, e in self._entries.items()}

    def where(self, **flags: Any) -> tuple[str, ...]:
        """The names of the entries whose attributes have these values, e.g. `where(monitorable=True)`."""
        return tuple(n for n, e in self._entries.items() if all(getattr(e, k) == v for k, v in flags.items()))


# ---------------------------------------------------------------- provider factories

def _load(path: str) -> type:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


class _SandboxMagic:
    """Wraps one of our own providers for sandbox accounts: the magic words fail it, time it out or slow it down
    like any other check type."""

    def __init__(self, inner: Provider):
        self.inner = inner
        self.check_type = inner.check_type
        self.name = inner.name

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        sandbox_magic(subject, self.check_type)
        return self.inner.run(subject, config, ctx)


class _Unconfigured:
    name = "unconfigured"

    def __init__(self, check_type: str):
        self.check_type = check_type

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        raise ProviderNotConfigured(f"no {self.check_type} upstream is configured for live accounts")


def ours(path: str) -> Providers:
    """Our own implementation (`module:Class`), real in both modes; sandbox accounts also get the magic words."""
    return Providers(sandbox=lambda check_type, settings: _SandboxMagic(_load(path)()),
                     live=lambda check_type, settings: _load(path)(), ours=True)


def upstream(live: Factory | None = None) -> Providers:
    """A paid upstream: the deterministic sandbox answer for sandbox accounts; for live ones the vendor class
    named in the `PROVIDER_CLASSES` setting, else `live` (our adapter when its credentials are set), else none."""

    def sandbox(check_type: str, settings: dict[str, Any]) -> Provider:
        from app.providers.sandbox import SandboxProvider  # local: the registry loads no provider module
        return SandboxProvider(check_type)

    def configured(check_type: str, settings: dict[str, Any]) -> Provider | None:
        path = (settings.get("PROVIDER_CLASSES") or {}).get(check_type)
        if path:
            return _load(path)(settings)
        return live(check_type, settings) if live is not None else None

    return Providers(sandbox=sandbox, live=configured)


def _abr(check_type: str, settings: dict[str, Any]) -> Provider | None:
    if not settings.get("ABR_GUID"):
        return None
    from app.providers.abr import AbrProvider  # local: the registry loads no provider module (httpx)
    return AbrProvider(settings["ABR_GUID"], timeout=float(settings.get("PROVIDER_TIMEOUT", 10)))


def _companies_house(check_type: str, settings: dict[str, Any]) -> Provider | None:
    if not settings.get("COMPANIES_HOUSE_API_KEY"):
        return None
    from app.providers.companies_house import CompaniesHouseProvider  # local: as above
    return CompaniesHouseProvider(settings["COMPANIES_HOUSE_API_KEY"],
                                  timeout=float(settings.get("PROVIDER_TIMEOUT", 10)))


# ---------------------------------------------------------------- the check types

NAMED = ("last_name", "full_name")
CHECK_TYPES: Registry[Product] = Registry(
    Product("pep_sanction_check", "PEP & Sanctions", 1,
            (("last_name", "first_name", "full_name", "business_name", "vessel_name"),),
            ours("app.providers.screening:PepSanctionProvider"), configs.PepSanctionConfig, uses_index=True,
            monitorable=True, results_view="hits"),
    Product("adverse_media", "Adverse Media", 2, ((*NAMED, "business_name"),), upstream(), monitorable=True),
    Product("phone_check", "Phone Check", 1, (("phone",),), ours("app.providers.phone:PhoneProvider")),
    Product("email_check", "Email Check", 1, (("email",),), ours("app.providers.email:EmailProvider")),
    Product("adc_check", "Deceased Check", 2, (("first_name",), ("last_name",), ("dob",)), upstream(),
            monitorable=True),
    Product("adc_custodian_check", "Deceased Custodian Check", 2, (("first_name",), ("last_name",), ("dob",)),
            upstream()),
    Product("banned_disqualified_persons", "Banned & Disqualified Persons", 1, (NAMED,),
            ours("app.providers.screening:BannedDisqualifiedProvider"), configs.BannedConfig, uses_index=True,
            monitorable=True, results_view="register_hits"),
    Product("court_check", "Court Check", 3, ((*NAMED, "business_name"),), upstream(), configs.CourtConfig,
            monitorable=True),
    Product("business_check", "Business Check", 2, (("business_number",),), upstream(_abr),
            configs.BusinessConfig, monitorable=True),
    Product("uk_business_check", "UK Business Check", 2, (("business_number",),), upstream(_companies_house),
            configs.UkBusinessConfig, monitorable=True),
    Product("realestate_check", "Real Estate Check", 3, (("address",),), upstream(), configs.RealEstateConfig),
    others={"group": "Group", "idpass": "IDPass"},  # an IDPass's review event carries check_type `idpass`
)


def check_type_label(check_type: str) -> str:
    """What people read for a check type (the API's `check_type_name`); a launch of several is a "Group"."""
    return CHECK_TYPES.label(check_type)


def results_view(check_type: str) -> str:
    """How a check type's results are shown (`Product.results_view`); a group shows its children's."""
    return CHECK_TYPES[check_type].results_view if check_type in CHECK_TYPES else "rows"


def provider_for(check_type: str, *, sandbox: bool, settings: dict[str, Any] | None = None) -> Provider:
    """The implementation that answers `check_type` for an account in this mode."""
    return CHECK_TYPES[check_type].provider(sandbox=sandbox, settings=settings or {})
