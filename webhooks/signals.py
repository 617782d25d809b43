"""What the webhooks app tells others about its deliveries (the apps meet in ``flows``).

:data:`delivery_attempted` is sent in the transaction that records each attempt at a
delivery (``webhooks.delivery.delivery_attempt``), and when a delivery is dropped because its
subscription was deactivated, with ``delivery`` as it stands after it (status, attempts,
``completed_at``) and ``error``: the attempt's error, ``"HTTP <code>"`` for a non-2xx answer,
or empty on success. A receiver that raises rolls the attempt's record back. The webhooks
app does not know who listens: ``flows.notices`` mirrors the state of players' notices.
"""

from django.dispatch import Signal

delivery_attempted = Signal()
