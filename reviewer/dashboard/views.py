"""The human review dashboard: server-rendered pages, htmx for the parts that change in place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memorypr.pulls.services import ReviewNotAllowed
from memorypr.revert.services import RevertRefused
from reviewer import services as review_services
from reviewer.dashboard import queue_selectors, selectors
from reviewer.dashboard.services import (
    ClaimHeld,
    ResolveRefused,
    claim_release,
    claim_take,
    pull_comment_by_reviewer,
    pull_decide_by_reviewer,
    pull_rereview_by_reviewer,
    pull_resolve_conflict,
    pull_revert_by_reviewer,
    pulls_decide_in_bulk,
)


def _user(request: HttpRequest) -> AbstractBaseUser:
    return request.user  # type: ignore[return-value]


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """The site's front page: where the dashboard, the API docs, the admin and health live."""
    return render(request, "reviewer/home.html")


@login_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    """The queue: a tab, the filters and the page all live in the query string (bookmarkable).

    htmx asks for the live part alone (tabs, rows, pager): when a filter changes, and every few
    seconds so that new KPRs appear without a reload.
    """
    user = _user(request)
    tab = request.GET.get("tab", "needs")
    if tab not in queue_selectors.TABS:
        tab = "needs"
    try:
        filters = queue_selectors.QueueFilters.from_query(request.GET)
    except queue_selectors.BadFilter as exc:
        return render(request, "reviewer/queue_bad_request.html", {"error": str(exc)}, status=400)
    page_obj, rows = queue_selectors.queue_page(
        user=user, tab=tab, filters=filters, page=_page_number(request.GET.get("page"))
    )
    filter_query = urlencode(filters.as_query())
    context = {
        "tab": tab,
        "tabs": [(name, label) for name, (label, _) in queue_selectors.TABS.items()],
        "counts": queue_selectors.queue_counts(user=user, filters=filters),
        "rows": rows,
        "page_obj": page_obj,
        "filters": filters,
        "choices": queue_selectors.queue_choices(user=user),
        "ages": [(name, label) for name, (label, _, _) in queue_selectors.AGES.items()],
        "claim_choices": [("me", "claimed by me"), ("anyone", "claimed by anyone"), ("nobody", "not claimed")]
        + [(name, f"claimed by {name}") for name in queue_selectors.queue_claimants(user=user)],
        "filter_query": filter_query,
        "tab_query": urlencode({"tab": tab, **filters.as_query()}),
        "self_query": urlencode({"tab": tab, **filters.as_query(), "page": page_obj.number}),
    }
    template = "reviewer/_queue_live.html" if request.htmx else "reviewer/queue.html"  # type: ignore[attr-defined]
    return render(request, template, context)


def _page_number(raw: str | None) -> int:
    return int(raw) if raw and raw.isdigit() and int(raw) > 0 else 1


@login_required
@require_POST
def queue_bulk(request: HttpRequest) -> HttpResponse:
    """Approve or reject the selected KPRs with one reason; back to the same queue view."""
    user = _user(request)
    pull_ids = request.POST.getlist("pull")
    visible = {str(pk) for pk in queue_selectors.visible_pull_ids(user=user, pull_ids=pull_ids)}
    if len(visible) != len(set(pull_ids)):
        raise Http404("No such KPR in your namespaces.")
    back = reverse("reviewer:queue") + "?" + request.POST.get("query", "")
    try:
        outcome = pulls_decide_in_bulk(
            pull_ids=pull_ids,
            user=user,
            verdict=request.POST.get("verdict", ""),
            reason=request.POST.get("reason", ""),
        )
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    verb = "approved" if request.POST.get("verdict") == "APPROVE" else "rejected"
    if outcome.decided:
        messages.success(request, f"{len(outcome.decided)} KPR(s) {verb}.")
    for pull_id, why in outcome.skipped:
        messages.warning(request, f"{pull_id[:8]} skipped: {why}")
    return redirect(back)


def _detail_context(request: HttpRequest, pull_id: str, **extra: Any) -> dict[str, Any]:
    pull = selectors.pull_for_reviewer(user=_user(request), pull_id=pull_id)
    if pull is None:
        raise Http404("No such KPR in your namespaces.")
    panels = selectors.pull_operation_panels(pull=pull)
    transcripts = {
        panel.operation.position: selectors.transcript_with_quote(
            pull=pull, quote=(panel.operation.evidence or {}).get("rawMessageQuote", "")
        )
        for panel in panels
    }
    claim = getattr(pull, "claim", None)
    return {
        "pull": pull,
        "panels": panels,
        "transcripts": transcripts,
        "events": list(pull.review_events.all()),
        "timeline": selectors.pull_timeline(pull=pull),
        "claim": claim,
        "decidable": pull.review_status in ("NEEDS_HUMAN_REVIEW", "PENDING"),
        "person": selectors.pull_human_decision(pull=pull),
        "links": selectors.pull_links(pull=pull),
        "pull_comments": selectors.pull_comments(pull=pull).get(None, []),
        "conflicting": [panel for panel in panels if panel.changed_since_proposed],
        # The merge runs after an approval commits: the panel asks again until it is done.
        "awaiting_merge": pull.review_status == "APPROVED" and pull.merge_status == "UNMERGED",
        **extra,
    }


@login_required
@require_GET
def pull_detail(request: HttpRequest, pull_id: str) -> HttpResponse:
    return render(request, "reviewer/pull_detail.html", _detail_context(request, str(pull_id)))


@login_required
@require_POST
def pull_decide(request: HttpRequest, pull_id: str) -> HttpResponse:
    if selectors.pull_for_reviewer(user=_user(request), pull_id=str(pull_id)) is None:
        raise Http404("No such KPR in your namespaces.")
    error, status = "", 200
    try:
        pull_decide_by_reviewer(
            pull_id=str(pull_id),
            user=_user(request),
            verdict=request.POST.get("verdict", ""),
            reason=request.POST.get("reason", "").strip(),
            excluded_operations=[int(value) for value in request.POST.getlist("exclude")],
        )
    except ValueError as exc:
        error, status = str(exc), 400
    except (ReviewNotAllowed, ClaimHeld) as exc:
        error, status = str(exc), 409
    context = _detail_context(request, str(pull_id), error=error)
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, "reviewer/_decision_panel.html", context, status=status)
    if error:
        return render(request, "reviewer/pull_detail.html", context, status=status)
    return redirect("reviewer:pull-detail", pull_id=pull_id)


@login_required
@require_POST
def pull_claim(request: HttpRequest, pull_id: str) -> HttpResponse:
    if selectors.pull_for_reviewer(user=_user(request), pull_id=str(pull_id)) is None:
        raise Http404("No such KPR in your namespaces.")
    error = ""
    try:
        if request.POST.get("release"):
            claim_release(pull_id=str(pull_id), user=_user(request))
        else:
            claim_take(
                pull_id=str(pull_id), user=_user(request), take_over=bool(request.POST.get("take_over"))
            )
    except ClaimHeld as exc:
        error = str(exc)
    context = _detail_context(request, str(pull_id), error=error)
    return render(request, "reviewer/_decision_panel.html", context, status=409 if error else 200)


@login_required
@require_POST
def pull_rereview(request: HttpRequest, pull_id: str) -> HttpResponse:
    _visible_or_404(request, pull_id)
    error, status = "", 200
    try:
        pull_rereview_by_reviewer(
            pull_id=str(pull_id), user=_user(request), reason=request.POST.get("reason", "")
        )
    except ValueError as exc:
        error, status = str(exc), 400
    except (review_services.RereviewNotAllowed, PermissionDenied) as exc:
        error, status = str(exc), 409
    context = _detail_context(request, str(pull_id), error=error)
    return render(request, "reviewer/_decision_panel.html", context, status=status)


@login_required
@require_GET
def pull_panel(request: HttpRequest, pull_id: str) -> HttpResponse:
    """The decision panel alone, polled while an approved KPR waits for its merge; once the
    merge is done the whole page is reloaded, so that every operation shows what it wrote."""
    context = _detail_context(request, str(pull_id))
    response = render(request, "reviewer/_decision_panel.html", context)
    if request.GET.get("until") == "merged" and not context["awaiting_merge"]:
        response["HX-Refresh"] = "true"
    return response


@login_required
@require_POST
def pull_comment(request: HttpRequest, pull_id: str) -> HttpResponse:
    """A comment on the KPR, or with `operation` on one of its operations; the page shows it."""
    _visible_or_404(request, pull_id)
    raw = request.POST.get("operation", "")
    try:
        pull_comment_by_reviewer(
            pull_id=str(pull_id),
            user=_user(request),
            body=request.POST.get("body", ""),
            operation_position=int(raw) if raw.isdigit() else None,
        )
    except ValueError as exc:
        messages.error(request, f"Comment not saved: {exc}")
    anchor = f"#op-{raw}" if raw.isdigit() else "#comments"
    return redirect(reverse("reviewer:pull-detail", kwargs={"pull_id": pull_id}) + anchor)


@login_required
@require_POST
def pull_resolve(request: HttpRequest, pull_id: str) -> HttpResponse:
    """Resolve a CONFLICT with a new KPR (a rebased copy, or the operations that still apply)."""
    _visible_or_404(request, pull_id)
    return _to_new_pull(
        request,
        pull_id,
        lambda: pull_resolve_conflict(
            pull_id=str(pull_id), user=_user(request), mode=request.POST.get("mode", "")
        ),
        refused=ResolveRefused,
    )


def _to_new_pull(
    request: HttpRequest, pull_id: str, make: Callable[[], Any], *, refused: type[Exception]
) -> HttpResponse:
    """Make a new KPR from this one and send the browser to it; bad input (400) or a refusal
    (409) shows the decision panel again with the reason."""
    try:
        created = make()
    except ValueError as exc:
        status, error = 400, str(exc)
    except refused as exc:
        status, error = 409, str(exc)
    else:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = reverse("reviewer:pull-detail", kwargs={"pull_id": created.pk})
        return response
    context = _detail_context(request, str(pull_id), error=error)
    return render(request, "reviewer/_decision_panel.html", context, status=status)


def _visible_or_404(request: HttpRequest, pull_id: str) -> None:
    if selectors.pull_for_reviewer(user=_user(request), pull_id=str(pull_id)) is None:
        raise Http404("No such KPR in your namespaces.")


@login_required
@require_POST
def pull_revert(request: HttpRequest, pull_id: str) -> HttpResponse:
    _visible_or_404(request, pull_id)
    return _to_new_pull(
        request,
        pull_id,
        lambda: pull_revert_by_reviewer(
            pull_id=str(pull_id), user=_user(request), reason=request.POST.get("reason", "")
        ),
        refused=RevertRefused,
    )


@login_required
@require_GET
def fact_history(request: HttpRequest, namespace: str, subject: str, key: str) -> HttpResponse:
    space = selectors.reviewer_namespaces(user=_user(request)).filter(name=namespace).first()
    if space is None:
        raise Http404("No such namespace among yours.")
    versions = selectors.fact_versions(namespace_id=space.pk, subject=subject, key=key)
    if not versions:
        raise Http404("No such fact.")
    return render(
        request,
        "reviewer/fact_history.html",
        {"namespace": space, "subject": subject, "key": key, "versions": versions},
    )
