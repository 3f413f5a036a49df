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
