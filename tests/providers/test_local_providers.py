"""The check types we answer ourselves, in sandbox and live accounts alike: phone, e-mail, PEP/sanctions and the
ASIC banned and disqualified registers (names in these tests are invented)."""
from __future__ import annotations

from pathlib import Path

import dns.exception
import dns.resolver
import pytest

from app.providers import CHECK_TYPES, RunContext, Subject, provider_for
from app.providers.base import ProviderError
from app.screening.importers import ListFormatError, parse_list
from app.screening.importers.asic import banned_type
from app.screening.index import ScreeningIndex
from app.screening.records import ListInfo, ListRecord, Name

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lists" / "asic"


def run(check_type, subject, config=None, *, sandbox=True, **ctx):
    return provider_for(check_type, sandbox=sandbox).run(Subject(**subject), config, RunContext(sandbox=sandbox, **ctx))


def statuses(result):
    return [(r.title, r.status) for r in result.results_overview]


# ------------------------------------------------------------------ phone_check

def test_valid_mobile_passes_with_its_facts():
    result = run("phone_check", {"phone": "0412 345 678", "address_country": "AU"})
    assert result.outcome == "pass"
    d = result.details
    assert d["valid"] and d["type"] == "mobile" and d["region"] == "AU" and d["e164"] == "+61412345678"
    assert d["international"] == "+61 412 345 678" and "Australia/" in d["timezones"][0]


@pytest.mark.parametrize("phone, country", [("+61 12", None), ("hello", None), ("0412 345 678", None),
                                            ("+1 555 0100 999", None)])
def test_invalid_numbers_fail(phone, country):
    result = run("phone_check", {"phone": phone, "address_country": country})
    assert statuses(result) == [("Invalid phone number", "fail")]
    assert result.outcome == "warning" and result.results_overview[0].alert_ids


@pytest.mark.parametrize("phone, kind", [("+61 1900 654 321", "premium_rate"), ("+44 56 1234 5678", "voip")])
def test_risky_number_types_warn(phone, kind):
    result = run("phone_check", {"phone": phone})
    assert result.details["type"] == kind
    assert [r.status for r in result.results_overview] == ["warning"]


def test_number_of_another_country_than_the_address_warns():
    result = run("phone_check", {"phone": "+44 7911 123456", "address_country": "AU"})
    assert [r.status for r in result.results_overview] == ["warning"]
    assert result.details["findings"][0]["code"] == "region_mismatch"


def test_alert_ids_are_stable_across_runs():
    first = run("phone_check", {"phone": "+61 1900 654 321"}).results_overview[0]
    again = run("phone_check", {"phone": "+61 1900 654 321"}).results_overview[0]
    assert first.alert_ids == again.alert_ids and first.alert_ids[0].isdigit()
    assert first.fingerprint == again.fingerprint


# ------------------------------------------------------------------ email_check

class FakeResolver:
    """Stands in for the public DNS, which this machine cannot reach: answers per domain (and, as a resolver
    that reaches the DNS does, for the root zone)."""

    def __init__(self, answers):
        self.answers = {("", "NS"): ["a.root-servers.net."], **answers}
        self.asked = []

    def resolve(self, domain, rdtype):
        self.asked.append((str(domain), rdtype))
        answer = self.answers.get((str(domain).rstrip("."), rdtype))
        if isinstance(answer, Exception):
            raise answer
        if answer is None:
            raise dns.resolver.NoAnswer()
        return answer


class MX:
    def __init__(self, preference, exchange):
        self.preference, self.exchange = preference, exchange


def email(address, answers):
    resolver = FakeResolver(answers)
    return run("email_check", {"email": address}, settings={"dns_resolver": resolver}), resolver


def test_deliverable_address_passes():
    result, resolver = email("Ana.Ruiz@Example.org", {("example.org", "MX"): [MX(10, "mx1.example.org.")]})
    assert result.outcome == "pass"
    assert result.details["normalized"] == "Ana.Ruiz@example.org"
    assert result.details["deliverable"] is True and result.details["mx"] == ["mx1.example.org"]
    assert ("example.org", "MX") in resolver.asked


def test_domain_that_does_not_exist_fails():
    result, _ = email("ana@nowhere-at-all.example", {("nowhere-at-all.example", "MX"): dns.resolver.NXDOMAIN()})
    assert statuses(result) == [("E-mail domain does not accept mail", "fail")]
    assert result.details["deliverable"] is False


def test_null_mx_fails():
    result, _ = email("ana@nomail.example", {("nomail.example", "MX"): [MX(0, ".")]})
    assert statuses(result) == [("E-mail domain does not accept mail", "fail")]


def test_dns_timeout_is_a_warning_not_a_failure():
    result, _ = email("ana@slow.example", {("slow.example", "MX"): dns.exception.Timeout()})
    assert statuses(result) == [("E-mail deliverability not verified", "warning")]
    assert result.details["deliverable"] is None


class NxdomainServer:
    """A resolver cut off from the internet that answers NXDOMAIN for every name, root included (this
    machine's own resolver does so): a local UDP DNS server, in a thread."""

    def __init__(self):
        import socket
        import threading
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        import dns.message
        import dns.rcode
        while not self.stop.is_set():
            try:
                wire, peer = self.sock.recvfrom(4096)
            except OSError:
                continue
            response = dns.message.make_response(dns.message.from_wire(wire))
            response.set_rcode(dns.rcode.NXDOMAIN)
            self.sock.sendto(response.to_wire(), peer)

    def close(self):
        self.stop.set()
        self.thread.join()
        self.sock.close()


def _local_resolver(port):
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers, resolver.port, resolver.lifetime, resolver.timeout = ["127.0.0.1"], port, 1.0, 1.0
    return resolver


def test_a_resolver_that_cannot_reach_the_dns_is_could_not_verify_never_a_fail():
    """Issue 18 §3: "domain does not exist" from a resolver that cannot see the root zone is no finding."""
    server = NxdomainServer()
    try:
        result = run("email_check", {"email": "jane@example.org"},
                     settings={"dns_resolver": _local_resolver(server.port)})
    finally:
        server.close()
    assert statuses(result) == [("E-mail deliverability not verified", "warning")]
    assert result.details["deliverable"] is None and "could not be verified" in result.check_summary
    assert "does not exist" not in str(result.details["findings"])


def test_a_resolver_on_a_closed_port_is_could_not_verify():
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    result = run("email_check", {"email": "jane@example.org"}, settings={"dns_resolver": _local_resolver(closed)})
    assert statuses(result) == [("E-mail deliverability not verified", "warning")]
    assert result.details["deliverable"] is None and result.outcome == "warning"


def test_disposable_domain_warns():
    result, _ = email("x@mailinator.com", {("mailinator.com", "MX"): [MX(10, "mail.mailinator.com.")]})
    assert statuses(result) == [("Disposable e-mail domain", "warning")]
    result, _ = email("x@eu.mailinator.com", {("eu.mailinator.com", "MX"): [MX(10, "mail.mailinator.com.")]})
    assert result.details["disposable"] is True


def test_bad_syntax_fails_without_asking_dns():
    result, resolver = email("ana@@example.org", {})
    assert statuses(result) == [("Invalid e-mail address", "fail")]
    assert resolver.asked == []


# ------------------------------------------------------------------ pep_sanction_check

SANCTIONS = ListInfo(name="test_sanctions", title="Test sanctions", publisher="Test", kind="sanction",
                     jurisdiction="us")
PEPS = ListInfo(name="test_peps", title="Test PEPs", publisher="Test", kind="pep", jurisdiction="au")


def _sanctioned(alias="Bartholomew Ignatius Quenneville"):
    return ListRecord(id="s-1", schema="Person", caption="Bartholomew QUENNEVILLE",
                      names=[Name(alias, "alias")], birth_dates=["1961-03-14"], topics=["sanction"],
                      sanctions=[{"programs": ["TEST-1"], "authority": "Test"}])


def _pep():
    return ListRecord(id="p-1", schema="Person", caption="Wilhelmina Ashcombe-Tarrant", topics=["role.pep"],
                      countries=["au"], positions=[{"title": "Senator", "country": "au"}])


def _index(*records_and_lists):
    return ScreeningIndex(list(records_and_lists), {"test_sanctions": "3", "test_peps": "7"})


def test_sanction_hit_fails_and_pep_hit_warns():
    index = _index((SANCTIONS, _sanctioned()), (PEPS, _pep()))
    sanctioned = run("pep_sanction_check", {"first_name": "Bartholomew", "last_name": "Quenneville"}, {}, index=index)
    assert [r.status for r in sanctioned.results_overview] == ["fail"]
    assert sanctioned.details["results"][0]["record"]["id"] == "s-1"
    pep = run("pep_sanction_check", {"first_name": "Wilhelmina", "last_name": "Ashcombe-Tarrant"},
              {"pep_countries": ["AU"]}, index=index)
    assert [r.status for r in pep.results_overview] == ["warning"]
    assert pep.details["config"]["pep_countries"] == ["AU"]


def test_no_match_still_records_list_and_engine_versions():
    index = _index((SANCTIONS, _sanctioned()), (PEPS, _pep()))
    result = run("pep_sanction_check", {"first_name": "Zebedee", "last_name": "Ollerenshaw"}, {}, index=index)
    assert statuses(result) == [("No PEP or sanctions match", "pass")]
    assert result.details["list_versions"] == {"test_peps": "7", "test_sanctions": "3"}
    assert result.details["engine_version"] and result.details["results"] == []


def test_alert_fingerprint_follows_the_records_deciding_facts():
    subject = {"first_name": "Bartholomew", "last_name": "Quenneville"}
    before = run("pep_sanction_check", subject, {}, index=_index((SANCTIONS, _sanctioned()))).results_overview[0]
    same = run("pep_sanction_check", subject, {}, index=_index((SANCTIONS, _sanctioned()))).results_overview[0]
    changed = run("pep_sanction_check", subject, {},
                  index=_index((SANCTIONS, _sanctioned(alias="Bart Quenneville")))).results_overview[0]
    assert before.alert_ids == same.alert_ids == changed.alert_ids  # the same listed party
    assert before.fingerprint == same.fingerprint
    assert before.fingerprint != changed.fingerprint  # a new alias is a deciding fact


def test_pep_sanction_needs_the_lists():
    with pytest.raises(ProviderError, match="not loaded"):
        run("pep_sanction_check", {"last_name": "Anyone"}, {}, index=None)


# ------------------------------------------------------------------ banned_disqualified_persons

def _asic_index():
    parsed = parse_list("asic-banned", FIXTURES / "banned.csv")
    return ScreeningIndex([(parsed.info, r) for r in parsed.records], {parsed.info.name: "1"}), parsed


def test_asic_register_import():
    _, parsed = _asic_index()
    assert parsed.info.name == "au_asic_banned" and parsed.info.kind == "banned"
    assert len(parsed.records) == 5  # the verbatim repeated row is kept once
    orsolya = [r for r in parsed.records if r.caption == "Orsolya Brigid Quillfeather"]
    assert sorted(r.properties["banned_type"][0] for r in orsolya) == ["credit_banned_disqualified",
                                                                       "disqualified_director"]
    director = next(r for r in orsolya if r.properties["banned_type"] == ["disqualified_director"])
    assert director.properties["start_date"] == ["2025-09-03"] and director.properties["end_date"] == ["2030-09-02"]
    assert director.properties["state"] == ["VIC"]


@pytest.mark.parametrize("published, expected", [
    ("Disq. Director", "disqualified_director"), ("Banned Futures", "banned_futures"),
    ("Banned Securities", "banned_securities"), ("AFS Banned & Disqualified", "afs_banned_disqualified"),
    ("Credit Banned & Disq.", "credit_banned_disqualified"), ("Disq. SMSF", "disqualified_smsf"),
    ("ATO Disqualified Trustee", "ato_disqualified_trustee")])
def test_asic_register_types(published, expected):
    assert banned_type(published) == expected


def test_asic_malformed_files_are_refused(tmp_path):
    bad_date = tmp_path / "bad.csv"
    lines = (FIXTURES / "banned.csv").read_text().splitlines()
    bad_date.write_text("\n".join([lines[0], lines[1].replace("03/09/2025", "2025-13-45")]) + "\n")
    with pytest.raises(ListFormatError, match="line 2: BD_PER_START_DT"):
        parse_list("asic-banned", bad_date)
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("NAME,TYPE\nA,B\n")
    with pytest.raises(ListFormatError, match="missing columns"):
        parse_list("asic-banned", wrong)


def test_banned_check_finds_the_person_on_each_register():
    index, _ = _asic_index()
    result = run("banned_disqualified_persons", {"first_name": "Orsolya", "middle_name": "Brigid", "last_name": "Quillfeather"}, {},
                 index=index)
    assert [r.status for r in result.results_overview] == ["fail", "fail"]
    assert sorted(r["banned_type"] for r in result.details["results"]) == ["credit_banned_disqualified",
                                                                          "disqualified_director"]
    assert result.details["list_versions"] == {"au_asic_banned": "1"}


def test_banned_types_filter():
    index, _ = _asic_index()
    result = run("banned_disqualified_persons", {"first_name": "Orsolya", "middle_name": "Brigid", "last_name": "Quillfeather"},
                 {"banned_types": ["disqualified_director"]}, index=index)
    assert [r["banned_type"] for r in result.details["results"]] == ["disqualified_director"]
    assert result.details["config"]["banned_types"] == ["disqualified_director"]
    clean = run("banned_disqualified_persons", {"first_name": "Halina", "last_name": "Przybylska"},
                {"banned_types": ["banned_futures"]}, index=index)
    assert statuses(clean) == [("Not on the banned and disqualified registers", "pass")]


def test_banned_near_misses_keep_the_register_shape_and_the_type_filter():
    """A run that keeps near misses (a check's, not a monitor's): the records below the threshold, in the shape of
    the register results, filtered by `banned_types` like them; they make no result row."""
    index, _ = _asic_index()
    subject = {"first_name": "Orsolya", "last_name": "Quilfether"}  # two letters off the family name
    result = run("banned_disqualified_persons", subject, {}, index=index, near_misses=True)
    assert result.details["results"] == [] and statuses(result) == [
        ("Not on the banned and disqualified registers", "pass")]
    assert sorted(r["banned_type"] for r in result.near_misses) == ["credit_banned_disqualified",
                                                                    "disqualified_director"]
    assert all(set(r) == set(_banned_keys()) and 0.55 <= r["similarity"] < 0.80 for r in result.near_misses)
    only = run("banned_disqualified_persons", subject, {"banned_types": ["disqualified_director"]}, index=index,
               near_misses=True)
    assert [r["banned_type"] for r in only.near_misses] == ["disqualified_director"]
    assert run("banned_disqualified_persons", subject, {}, index=index).near_misses is None  # not asked


def _banned_keys():
    index, _ = _asic_index()
    result = run("banned_disqualified_persons", {"first_name": "Orsolya", "middle_name": "Brigid",
                                                 "last_name": "Quillfeather"}, {}, index=index)
    return result.details["results"][0].keys()


def test_banned_lists_never_answer_a_pep_sanction_check():
    index, _ = _asic_index()
    result = run("pep_sanction_check", {"first_name": "Casimir", "last_name": "Vanterpool"}, {}, index=index)
    assert result.outcome == "pass"


# ------------------------------------------------------------------ sandbox magic on our own check types

OURS = tuple(e.name for e in CHECK_TYPES.entries() if e.providers.ours)


@pytest.mark.parametrize("check_type", OURS)
def test_sandbox_fail_fails_our_check_types_in_sandbox_only(check_type):
    subject = {"first_name": "Any", "last_name": "SANDBOX-FAIL", "phone": "+61 412 345 678",
               "email": "a@example.org"}
    with pytest.raises(ProviderError, match="forced"):
        run(check_type, subject, {}, sandbox=True, index=_index((SANCTIONS, _sanctioned())))
    assert set(OURS) == {"pep_sanction_check", "banned_disqualified_persons", "phone_check", "email_check"}
