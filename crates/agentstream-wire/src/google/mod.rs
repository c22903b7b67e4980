//! Google Gemini (placeholder while building).
