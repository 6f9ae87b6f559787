from ttlcache.cache import TTLCache

__all__ = ["TTLCache"]
