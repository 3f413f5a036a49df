"""The signed-in user's own settings: the time zone times are shown in (the password has its own page), and
the `localtime` filter every template uses for times."""
from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from flask import flash, g, redirect, request, url_for
from flask_login import current_user, login_required
from markupsafe import Markup, escape

from app.accounts import services as accounts
from app.portal import bp
from app.portal.base import portal_actor, render, save
from app.portal.forms import TimeZoneForm

TZ_COOKIE = "tz"  # set by static/js/app.js from the browser's zone


@lru_cache(maxsize=1)
def zone_names() -> list[str]:
    return sorted(available_timezones())


def _zone(name: str | None) -> ZoneInfo | None:
    if not name or len(name) > 64:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def display_zone() -> ZoneInfo:
    """The user's profile zone, else the browser's (cookie), else UTC."""
    if "display_zone" not in g:
        zone = None
        if current_user and current_user.is_authenticated:
            zone = _zone(current_user.time_zone)
        g.display_zone = zone or _zone(request.cookies.get(TZ_COOKIE)) or ZoneInfo("UTC")
    return g.display_zone


@bp.app_template_filter("localtime")
def localtime(value: datetime | None, with_time: bool = True) -> Markup:
    """<time> in the user's zone with the zone's abbreviation; the exact UTC time on hover (title)."""
    if value is None:
        return Markup('<span class="muted">—</span>')
    utc = (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)
    local = utc.astimezone(display_zone())
    text = escape(local.strftime("%d %b %Y"))
    if with_time:
        text += Markup(' <span class="muted">') + escape(local.strftime("%H:%M ") + (local.tzname() or "")) \
            + Markup("</span>")
    return Markup('<time datetime="{}" title="{}">{}</time>').format(
        utc.strftime("%Y-%m-%dT%H:%M:%SZ"), utc.strftime("%Y-%m-%d %H:%M:%S UTC"), text)


def _page(form: TimeZoneForm, status: int = 200):
    return render("auth/profile.html", status=status, tz_form=form, zones=zone_names(),
                  browser_zone=request.cookies.get(TZ_COOKIE))


@bp.get("/profile")
@login_required
def profile():
    return _page(TimeZoneForm(formdata=None, time_zone=current_user.time_zone or ""))


@bp.post("/profile/time-zone")
@login_required
def profile_time_zone():
    form = TimeZoneForm()
    user = save(form, lambda: accounts.set_time_zone(portal_actor(), form.time_zone.data))
    if user is None:
        return _page(form, status=422)
    flash(f"Times are now shown in {user.time_zone}." if user.time_zone
          else "Times now follow your browser's time zone.", "success")
    return redirect(url_for("portal.profile"))
