//! Recording and blessing (to be built).
