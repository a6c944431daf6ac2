//! The model stub on its own: directive grammar, request reading, exact SSE bytes, HTTP handling.

mod real;
