"""Webhook endpoints and their delivery log (docs/webhooks.md)."""
from __future__ import annotations

import uuid

from flask import current_app, request

from app.api.base import actor, bp, endpoint, listing, single
from app.core.transactions import commit
from app.webhooks import queries, services
from app.webhooks.schemas import (DeliveryOut, EndpointCreate, EndpointOut, EndpointSecretOut, EndpointUpdate,
                                  ReplayOut, ReplayWindow)

TAG = "Webhooks"
QUEUE_DOWN = " 503: background processing is unavailable (nothing was written)."


@bp.post("/webhook-endpoints")
@endpoint(summary="Register a webhook endpoint", tag=TAG, body=EndpointCreate, response=EndpointSecretOut,
          status=201, errors=[403, 422],
          description="The signing secret is in this response only. 400 when the URL is not http(s), carries "
                      "credentials, or resolves to a private, loopback, link-local or metadata address.")
def create_webhook_endpoint(body: dict):
    hook, secret = services.create_endpoint(actor(), body, current_app.config)
    commit()
    return single(EndpointOut, hook, 201, extra={"secret": secret})


@bp.get("/webhook-endpoints")
@endpoint(summary="List webhook endpoints", tag=TAG, response=EndpointOut, is_list=True,
          query={"sort": "created_at (prefix - for descending; default -created_at)"})
def list_webhook_endpoints():
    return listing(EndpointOut, queries.list_endpoints(actor(), queries.endpoint_list_params(request.args)))


@bp.get("/webhook-endpoints/<uuid:endpoint_uuid>")
@endpoint(summary="Show a webhook endpoint", tag=TAG, response=EndpointOut, errors=[404])
def show_webhook_endpoint(endpoint_uuid: uuid.UUID):
    return single(EndpointOut, queries.get_endpoint(actor(), endpoint_uuid))


@bp.patch("/webhook-endpoints/<uuid:endpoint_uuid>")
@endpoint(summary="Update a webhook endpoint", tag=TAG, body=EndpointUpdate, response=EndpointOut,
          errors=[403, 404], description="Only supplied fields change. enabled true enables a disabled endpoint.")
def update_webhook_endpoint(endpoint_uuid: uuid.UUID, body: dict):
    hook = services.update_endpoint(actor(), endpoint_uuid, body, current_app.config)
    commit()
    return single(EndpointOut, hook)


@bp.delete("/webhook-endpoints/<uuid:endpoint_uuid>")
@endpoint(summary="Delete a webhook endpoint", tag=TAG, response=EndpointOut, errors=[403, 404],
          description="Deletes the endpoint and its delivery log; nothing more is sent to it.")
def delete_webhook_endpoint(endpoint_uuid: uuid.UUID):
    hook = services.delete_endpoint(actor(), endpoint_uuid)
    commit()
    return single(EndpointOut, hook)


@bp.post("/webhook-endpoints/<uuid:endpoint_uuid>/rotate-secret")
@endpoint(summary="Rotate a webhook endpoint's secret", tag=TAG, response=EndpointSecretOut, errors=[403, 404, 422],
          description="A new secret, shown once; the previous one keeps signing beside it for 24 hours "
                      "(secret_rotated_until), so deliveries carry two signatures meanwhile.")
def rotate_webhook_secret(endpoint_uuid: uuid.UUID):
    hook, secret = services.rotate_secret(actor(), endpoint_uuid)
    commit()
    return single(EndpointOut, hook, extra={"secret": secret})


@bp.post("/webhook-endpoints/<uuid:endpoint_uuid>/test")
@endpoint(summary="Send a test delivery", tag=TAG, response=DeliveryOut, status=202,
          errors=[403, 404, 409, 422, 503],
          description="A signed webhook.test delivery to this endpoint, sent and logged like any other. 409: the "
                      "endpoint is disabled." + QUEUE_DOWN)
def test_webhook_endpoint(endpoint_uuid: uuid.UUID):
    delivery = services.send_test(actor(), endpoint_uuid)
    commit()
    return single(DeliveryOut, delivery, 202)


@bp.get("/webhook-endpoints/<uuid:endpoint_uuid>/deliveries")
@endpoint(summary="List an endpoint's deliveries", tag=TAG, response=DeliveryOut, is_list=True, errors=[404],
          query={"filter[status]": "pending | delivered | failed", "filter[event_type]": "an event type",
                 "sort": "created_at (prefix - for descending; default -created_at)"},
          description="The delivery log of the last 30 days, each delivery with its attempts.")
def list_webhook_deliveries(endpoint_uuid: uuid.UUID):
    page = queries.list_deliveries(actor(), endpoint_uuid, queries.delivery_list_params(request.args))
    return listing(DeliveryOut, page)


@bp.post("/webhook-endpoints/<uuid:endpoint_uuid>/replay")
@endpoint(summary="Replay an endpoint's failed deliveries", tag=TAG, body=ReplayWindow, response=ReplayOut,
          status=202, errors=[403, 404, 409, 422, 503],
          description="Every failed delivery created in [since, until) gets a new attempt with its webhook-id "
                      "and a fresh signature; deliveries in flight are left. 409: the endpoint is disabled."
                      + QUEUE_DOWN)
def replay_webhook_window(endpoint_uuid: uuid.UUID, body: dict):
    counts = services.replay_window(actor(), endpoint_uuid, body)
    commit()
    return single(ReplayOut, counts, 202)


@bp.get("/webhook-deliveries/<uuid:delivery_uuid>")
@endpoint(summary="Show a webhook delivery", tag=TAG, response=DeliveryOut, errors=[404])
def show_webhook_delivery(delivery_uuid: uuid.UUID):
    return single(DeliveryOut, queries.get_delivery(actor(), delivery_uuid))


@bp.post("/webhook-deliveries/<uuid:delivery_uuid>/replay")
@endpoint(summary="Replay a webhook delivery", tag=TAG, response=DeliveryOut, status=202,
          errors=[403, 404, 409, 422, 503],
          description="A new attempt with the same webhook-id and a fresh signature. 409 while an attempt is in "
                      "flight (status pending) or the endpoint is disabled." + QUEUE_DOWN)
def replay_webhook_delivery(delivery_uuid: uuid.UUID):
    delivery = services.replay_delivery(actor(), delivery_uuid)
    commit()
    return single(DeliveryOut, delivery, 202)
