"""The admin app with the staff admin site (accounts.admin_site) as ``admin.site``."""

from django.contrib.admin.apps import AdminConfig


class StaffAdminConfig(AdminConfig):
    default_site = "accounts.admin_site.StaffAdminSite"
