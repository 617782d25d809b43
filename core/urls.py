"""The site's pages: the public pages and reviewer screens (``web``) and the downloads
(``exports``). Included by ``config.urls`` inside ``i18n_patterns``."""

from django.urls import include, path

urlpatterns = [
    path("", include("web.urls")),
    path("exports/", include("exports.urls")),
]
