"""memorypr-client: propose, recall, verify and give feedback on an agent's reviewed memory.

Only httpx is needed: no server, no Django, no models. See `MemoryprClient`.
"""

from memorypr_client._calls import NO_RETRIES, RetryPolicy
from memorypr_client.client import AsyncMemoryprClient, MemoryprClient
from memorypr_client.errors import (
    ApiError,
    AuthenticationError,
    Conflict,
    FieldError,
    MemoryprError,
    NotFound,
    PermissionDenied,
    RateLimited,
    TransportError,
    ValidationError,
)
from memorypr_client.models import (
    Context,
    Evidence,
    EvidenceIn,
    Fact,
    FactBrief,
    FactHistory,
    FactVersion,
    FeedbackResult,
    Operation,
    OperationIn,
    Page,
    Pull,
    PullDetail,
    Retrieval,
    RetrievedFact,
    Session,
    Turn,
    Verification,
    VerifyFlag,
)

__version__ = "0.1.0"

__all__ = [
    "NO_RETRIES",
    "ApiError",
    "AsyncMemoryprClient",
    "AuthenticationError",
    "Conflict",
    "Context",
    "Evidence",
    "EvidenceIn",
    "Fact",
    "FactBrief",
    "FactHistory",
    "FactVersion",
    "FeedbackResult",
    "FieldError",
    "MemoryprClient",
    "MemoryprError",
    "NotFound",
    "Operation",
    "OperationIn",
    "Page",
    "PermissionDenied",
    "Pull",
    "PullDetail",
    "RateLimited",
    "Retrieval",
    "RetrievedFact",
    "RetryPolicy",
    "Session",
    "TransportError",
    "Turn",
    "ValidationError",
    "Verification",
    "VerifyFlag",
]
