from django.contrib import admin

from memorypr.evolution.models import ForgettingMark, JobCursor


@admin.register(ForgettingMark)
class ForgettingMarkAdmin(admin.ModelAdmin):
    list_display = ("fact", "reason", "confidence", "marked_at", "pull")
    readonly_fields = ("fact", "reason", "confidence", "marked_at", "pull")


@admin.register(JobCursor)
class JobCursorAdmin(admin.ModelAdmin):
    list_display = ("job", "position", "updated_at")
