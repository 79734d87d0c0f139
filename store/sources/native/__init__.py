"""Native missions (`missions/<id>/`) as a source: `source.NativeSource`."""
