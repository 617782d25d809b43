"""Where the apps meet: the cross-app flows of the tour, each calling app services in order.

App services never import another app's services; a flow that spans apps lives here:
finalisation → champion → qualification → audit → webhooks; sanction / appeal → void or
restore games → revoke or restore titles; grant approval with the integrity check; the
suspension check at ingest. Callers outside the apps (API views, pages, tasks, commands)
call these flows.
"""
