"""A vendor provider as a customer would plug one in through PROVIDER_CLASSES (used by the tests)."""
from app.providers import ProviderResult, ResultRow


class EchoVendor:
    check_type = "adverse_media"
    name = "echo"

    def __init__(self, settings):
        self.settings = settings

    def run(self, subject, config, ctx):
        return ProviderResult([ResultRow("Nothing found", "pass")], {"subject": subject.to_dict(), "config": None,
                                                                      "results": []},
                              check_summary=f"Echo: {subject.display_name}.", provider="echo")


class LabelledVendor(EchoVendor):
    """A vendor whose result ids are its own labels, not numbers (issue 18 §4)."""

    name = "labelled"
    quiet = False  # the tests switch the article off and on again

    def run(self, subject, config, ctx):
        if self.quiet:
            return ProviderResult([ResultRow("No adverse media", "pass")], {"subject": subject.to_dict(),
                                                                            "config": None, "results": []},
                                  check_summary="Nothing found.", provider="labelled")
        return ProviderResult([ResultRow("Adverse media article", "warning", ["MEDIA-ART-991"], "f1")],
                              {"subject": subject.to_dict(), "config": None, "results": [{"id": "MEDIA-ART-991"}]},
                              check_summary="1 article.", provider="labelled")
