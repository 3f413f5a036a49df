"""Factories for tests: accounts with users and keys, and thin JSON clients bound to an API key."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from flask import Flask

PASSWORD = "correct-horse-42"
_seq = itertools.count(1)


class ApiClient:
    def __init__(self, app: Flask, secret: str):
        self.client = app.test_client()
        self.secret = secret

    def request(self, method: str, path: str, json: Any = None, headers: dict | None = None, **kw):
        all_headers = {"Authorization": f"Bearer {self.secret}", **(headers or {})}
        url = path if path.startswith("/api/") else f"/api/v1{path}"
        return self.client.open(url, method=method, json=json, headers=all_headers, **kw)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, json=None, **kw):
        return self.request("POST", path, json=json, **kw)

    def patch(self, path, json=None, **kw):
        return self.request("PATCH", path, json=json, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)


@dataclass
class Tenant:
    account_uuid: str
    account_id: int
    email: str
    password: str
    api_key: str
    api_key_uuid: str
    api: ApiClient

    def program(self, **fields) -> dict:
        body = {"program_name": f"Program {next(_seq)}", **fields}
        response = self.api.post("/programs", json=body)
        assert response.status_code == 201, response.get_json()
        return response.get_json()["data"]

    def entity(self, program_uuid: str, **fields) -> dict:
        body = {"entity_type": "individual", "first_name": "Jane", "last_name": f"Doe{next(_seq)}", **fields}
        response = self.api.post(f"/programs/{program_uuid}/entities", json=body)
        assert response.status_code == 201, response.get_json()
        return response.get_json()["data"]


class Factory:
    def __init__(self, app: Flask):
        self.app = app

    def tenant(self, name: str | None = None, credit: int = 1000, sandbox: bool = True) -> Tenant:
        from app.billing.services import open_account
        from app.core.transactions import commit

        n = next(_seq)
        email = f"admin{n}@example.com"
        with self.app.app_context():
            result = open_account(name=name or f"Account {n}", email=email, password=PASSWORD, credit=credit,
                                       sandbox=sandbox)
            commit()
            from app.accounts.models import Account
            from app.extensions import db
            from sqlalchemy import select
            import uuid
            account_id = db.session.scalar(select(Account.id).where(Account.uuid == uuid.UUID(result["account_uuid"])))
        return Tenant(account_uuid=result["account_uuid"], account_id=account_id, email=email, password=PASSWORD,
                      api_key=result["api_key"], api_key_uuid=result["api_key_uuid"],
                      api=ApiClient(self.app, result["api_key"]))

    def user(self, tenant: Tenant, role: str = "analyst", email: str | None = None) -> str:
        from app.accounts.models import Account
        from app.accounts.services import cli_actor, create_user
        from app.core.transactions import commit
        from app.extensions import db

        email = email or f"{role}{next(_seq)}@example.com"
        with self.app.app_context():
            account = db.session.get(Account, tenant.account_id)
            create_user(cli_actor(account), email=email, password=PASSWORD, role=role)
            commit()
        return email

    def login(self, email: str, password: str = PASSWORD):
        """A test client logged into the portal (CSRF token fetched from the login form)."""
        client = self.app.test_client()
        page = client.get("/login")
        token = csrf_from(page.get_data(as_text=True))
        response = client.post("/login", data={"email": email, "password": password, "csrf_token": token})
        assert response.status_code == 302, response.get_data(as_text=True)[:500]
        return client


def csrf_from(html: str) -> str:
    import re
    m = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html) or re.search(
        r'name="csrf-token" content="([^"]+)"', html)
    assert m, "no CSRF token on the page"
    return m.group(1)
