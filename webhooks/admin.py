"""Partners' webhook subscriptions (managed here) and the read-only delivery log."""

from django import forms
from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from webhooks.models import Delivery, DeliveryAttempt, EventType, Subscription

SIGNATURE_HELP = (
    "Each request is a POST of JSON {type, created_at, data} with the headers "
    "X-UNOTour-Event, X-UNOTour-Delivery (the delivery id: drop ids already processed), "
    "X-UNOTour-Timestamp (Unix seconds) and X-UNOTour-Signature: sha256= followed by the "
    "hex HMAC-SHA256, keyed with the secret, of timestamp + '.' + the raw body. The partner "
    "recomputes it over the body exactly as received, compares in constant time "
    "(webhooks.signing.verify_signature does it) and refuses timestamps older than a few "
    "minutes. A 2xx answer within 5 seconds is a success; anything else is retried after "
    "30 s, 1, 2, 4 and 8 minutes (6 attempts), then the delivery is marked failed."
)


class SubscriptionForm(forms.ModelForm[Subscription]):
    url = forms.URLField(max_length=500, assume_scheme="https")
    events = forms.MultipleChoiceField(
        choices=EventType.choices, widget=forms.CheckboxSelectMultiple, required=False
    )

    class Meta:
        model = Subscription
        fields = ("name", "url", "secret", "events", "active")


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin[Subscription]):
    form = SubscriptionForm
    list_display = ("name", "url", "active", "created_at")
    list_filter = ("active",)
    search_fields = ("name", "url")
    fieldsets = ((None, {"fields": SubscriptionForm.Meta.fields, "description": SIGNATURE_HELP}),)


class DeliveryAttemptInline(admin.TabularInline[DeliveryAttempt, Delivery]):
    model = DeliveryAttempt
    extra = 0
    can_delete = False
    fields = ("number", "at", "status_code", "error", "duration_ms", "response_body")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin[Delivery]):
    list_display = ("id", "event_type", "subscription", "status", "attempts", "created_at")
    list_filter = ("status", "event_type", "subscription")
    readonly_fields = (
        "subscription",
        "event_type",
        "body",
        "status",
        "attempts",
        "created_at",
        "completed_at",
    )
    inlines = [DeliveryAttemptInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False
