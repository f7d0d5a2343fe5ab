//! Empty on purpose: brush-parser 0.4 lists insta (a snapshot-testing library) among its
//! dependencies, not its dev-dependencies, but uses it only in its own tests. Nothing here is
//! called; a brush-parser that did call it would not compile, and that is the guard.
