"""Endpoint and delivery reads shared by the portal and the API: the caller's account only (another account's
record is NotFound)."""
from __future__ import annotations

from typing import Mapping

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from app.core.actor import Actor
from app.core.errors import NotFound
from app.core.listing import ListParams, Page, choice, paginate, parse_list_params
from app.extensions import db
from app.webhooks.models import DELIVERY_STATUSES, WebhookDelivery, WebhookEndpoint
from app.webhooks.registry import NAMES

DELIVERY_FILTERS = {"status": choice(*DELIVERY_STATUSES), "event_type": choice(*NAMES)}


def endpoint_list_params(args: Mapping[str, str], **kw) -> ListParams:
    return parse_list_params(args, filters={}, sorts=("created_at",), default_sort="-created_at", archived=False,
                             **kw)


def delivery_list_params(args: Mapping[str, str], **kw) -> ListParams:
    return parse_list_params(args, filters=DELIVERY_FILTERS, sorts=("created_at",), default_sort="-created_at",
                             archived=False, **kw)


def get_endpoint(actor: Actor, endpoint_uuid, *, for_update: bool = False) -> WebhookEndpoint:
    stmt = select(WebhookEndpoint).where(WebhookEndpoint.uuid == endpoint_uuid,
                                         WebhookEndpoint.account_id == actor.account_id)
    endpoint = db.session.scalar(stmt.with_for_update(of=WebhookEndpoint) if for_update else stmt)
    if endpoint is None:
        raise NotFound("Webhook endpoint not found.")
    return endpoint


def list_endpoints(actor: Actor, params: ListParams) -> Page:
    order = WebhookEndpoint.created_at.desc() if params.descending else WebhookEndpoint.created_at
    stmt = (select(WebhookEndpoint).where(WebhookEndpoint.account_id == actor.account_id)
            .order_by(order, WebhookEndpoint.id))
    return paginate(stmt, params)


def get_delivery(actor: Actor, delivery_uuid, *, for_update: bool = False) -> WebhookDelivery:
    stmt = select(WebhookDelivery).where(WebhookDelivery.uuid == delivery_uuid,
                                         WebhookDelivery.account_id == actor.account_id)
    delivery = db.session.scalar(stmt.with_for_update() if for_update else stmt)
    if delivery is None:
        raise NotFound("Webhook delivery not found.")
    return delivery


def list_deliveries(actor: Actor, endpoint_uuid, params: ListParams) -> Page:
    endpoint = get_endpoint(actor, endpoint_uuid)
    stmt = select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id)
    for name, column in (("status", WebhookDelivery.status), ("event_type", WebhookDelivery.event_type)):
        if name in params.filters:
            stmt = stmt.where(column == params.filters[name])
    order = WebhookDelivery.created_at.desc() if params.descending else WebhookDelivery.created_at
    stmt = stmt.options(selectinload(WebhookDelivery.attempt_log), selectinload(WebhookDelivery.endpoint))
    return paginate(stmt.order_by(order, WebhookDelivery.id.desc() if params.descending else WebhookDelivery.id),
                    params)
