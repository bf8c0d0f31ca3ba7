"""Health and metrics of the running deployment.

It reads every app (the KPR queues of pulls, the heartbeat of common) and nothing imports it
but the URLs and the middleware setting, so it sits above the apps and closes no import cycle.
"""
