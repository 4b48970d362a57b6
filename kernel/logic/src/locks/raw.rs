//! What every lock here provides.

/// A lock that protects no data by itself.
///
/// `unlock` must only be called by the holder of a successful `lock` or
/// `try_lock`; the algorithms do not check ownership.
pub trait RawLock: Sync {
    /// Blocks (spinning) until the lock is held by the caller.
    fn lock(&self);
    /// Takes the lock if that is possible without waiting behind others.
    fn try_lock(&self) -> bool;
    /// Releases the lock held by the caller.
    fn unlock(&self);
    /// Whether the lock is held or has waiters queued (a racy snapshot).
    fn is_locked(&self) -> bool;
}
