"""Verifiable title credentials (SPEC §6, Credentials; docs/decisions.md, issue 29).

* :mod:`~titles.credentials.keys` — the issuer's Ed25519 keys (settings) and its ``did:web``
  DID document;
* :mod:`~titles.credentials.contexts` — the JSON-LD document loader: the vendored contexts
  only, never the network;
* :mod:`~titles.credentials.proofs` — Data Integrity proofs, cryptosuite ``eddsa-rdfc-2022``;
* :mod:`~titles.credentials.status` — the Bitstring Status Lists, written in the transaction
  of the title change;
* :mod:`~titles.credentials.documents` — the Open Badges 3.0 credentials of a Master term or
  a Lifetime title, and the status list credentials;
* :mod:`~titles.credentials.verify` — verifying a credential offline.
"""
