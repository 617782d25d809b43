"""URL configuration: admin, API (schema and docs served offline), health, and the site's
pages: the public pages and reviewer screens (``web``) and the downloads (``exports``),
inside ``i18n_patterns``."""

from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from core.health import healthz
from titles.api.credentials import did_json

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # The title credentials' issuer, did:web of the tour's host (titles.credentials.keys).
    path(".well-known/did.json", did_json, name="did-document"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file: no inline script (CSP).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path("api/", include("config.api_urls")),
]

urlpatterns += i18n_patterns(
    path("admin/", admin.site.urls),
    path("", include("web.urls")),
    path("exports/", include("exports.urls")),
    prefix_default_language=False,
)

# API errors in JSON under /api/ (core.api), the site's own pages elsewhere.
handler404 = "core.api.api_not_found"
handler500 = "core.api.api_server_error"
