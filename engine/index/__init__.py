"""The index room: the Tantivy full-text index (the only tantivy user), the catalog (the owner of all
catalog SQL), the store that keeps them consistent, and reconcile."""
