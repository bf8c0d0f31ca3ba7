"""`MemoryprRetriever`: the facts memorypr holds true now, as LangChain documents.

Only active facts are ever served (retrieval drops superseded, retracted, expired and stale
versions), so a chain that recalls through this retriever never sees a replaced value.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from memorypr_client import AsyncMemoryprClient, MemoryprClient
from memorypr_client.models import FactBrief, JsonValue, Retrieval, RetrievedFact


def value_text(value: JsonValue) -> str:
    """A fact's value as prose: strings as they are, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _replaced(updates: FactBrief | None, value: JsonValue) -> str:
    # A version that only changed confidence replaced nothing worth telling the model.
    if updates is None or updates.value == value:
        return ""
    return f" (updates an older memory: {value_text(updates.value)}, which is no longer true)"


def fact_document(fact: RetrievedFact, *, subject: str) -> Document:
    """One recalled fact: `key: value` as the text; its identity and provenance as metadata."""
    return Document(
        page_content=f"{fact.key}: {value_text(fact.value)}{_replaced(fact.updates, fact.value)}",
        metadata={
            "key": fact.key,
            "subject": subject,
            "factId": fact.fact_id,
            "version": fact.version,
            "score": fact.score.final,
            "kprId": fact.pull,
            "category": fact.category,
            "confidence": fact.confidence,
            "updatesFactId": fact.updates.fact_id if fact.updates else None,
        },
    )


def documents(answer: Retrieval) -> list[Document]:
    return [fact_document(fact, subject=answer.subject) for fact in answer.results]


class MemoryprRetriever(BaseRetriever):
    """Recall through `POST /api/v1/retrieve`: the subject's active facts, best first.

    `client` serves `invoke`; `async_client`, when given, serves `ainvoke` (otherwise the
    synchronous client runs in an executor). Each document's metadata carries `key`,
    `subject`, `factId` (what `MemoryprClient.feedback` takes), `version`, `score` and
    `kprId`, the knowledge pull request that wrote the fact.
    """

    client: MemoryprClient
    async_client: AsyncMemoryprClient | None = None
    subject: str
    top_k: int = 5
    categories: Sequence[str] | None = None
    namespace: str | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return documents(
            self.client.retrieve(
                query,
                subject=self.subject,
                top_k=self.top_k,
                categories=self.categories,
                namespace=self.namespace,
            )
        )

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager, **kwargs)
        answer = await self.async_client.retrieve(
            query,
            subject=self.subject,
            top_k=self.top_k,
            categories=self.categories,
            namespace=self.namespace,
        )
        return documents(answer)
