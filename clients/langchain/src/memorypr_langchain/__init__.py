"""memorypr for LangChain: recall active facts as documents, keep the chat in working memory,
and propose what the user says as reviewed memory.

Needs langchain-core and memorypr-client only: no server, Django or torch.
"""

from memorypr_langchain.history import (
    MemoryprChatMessageHistory,
    ProposalRequest,
    Propose,
    SessionTurn,
)
from memorypr_langchain.retriever import MemoryprRetriever, fact_document

__version__ = "0.1.0"

__all__ = [
    "MemoryprChatMessageHistory",
    "MemoryprRetriever",
    "ProposalRequest",
    "Propose",
    "SessionTurn",
    "fact_document",
]
