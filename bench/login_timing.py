"""Sign-in answer time for an unknown e-mail, a disabled account and an existing account with a wrong
password (issue 7: they must not reveal which e-mails exist). Prints the median of N attempts each.

    DATABASE_URL=sqlite:////tmp/login-bench.db .venv/bin/python bench/login_timing.py [N]
"""
from __future__ import annotations

import statistics
import sys
import time


def main(n: int) -> None:
    from flask_migrate import upgrade
    from sqlalchemy import select

    from app import create_app
    from app.accounts import services
    from app.accounts.models import User
    from app.extensions import db

    app = create_app()
    with app.app_context():
        upgrade()
        for email in ("bench-active@example.com", "bench-disabled@example.com"):
            if db.session.scalar(select(User).where(User.email == email)) is None:
                services.bootstrap_account(name="Bench", email=email, password="bench-password-1")
        db.session.execute(User.__table__.update().where(User.email == "bench-disabled@example.com")
                           .values(is_disabled=True))
        db.session.commit()
        cases = {"unknown e-mail": "nobody@example.com", "disabled account": "bench-disabled@example.com",
                 "existing account, wrong password": "bench-active@example.com"}
        for label, email in cases.items():
            times = []
            for _ in range(n):
                start = time.perf_counter()
                services.authenticate_user(email, "wrong-password-9")
                times.append((time.perf_counter() - start) * 1000)
                db.session.rollback()
            print(f"{label:36s} median {statistics.median(times):7.1f} ms  (min {min(times):.1f}, max {max(times):.1f}, n={n})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
