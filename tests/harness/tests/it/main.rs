//! The harness's integration tests, one test binary: the embedded server's launcher stops when
//! told to (`launcher`), and the substrate the product stands on holds (`substrate`).

mod launcher;
mod substrate;
