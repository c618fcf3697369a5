#!/usr/bin/env python3
"""torchrun for a PyTorch built without libuv (Debian 13's python3-torch 2.6, some source builds).

torchrun 2.4+ makes its rendezvous TCPStore with the libuv server, which such a build refuses
("use_libuv was requested but PyTorch was build without libuv support") before it starts a worker;
USE_LIBUV=0 is read only by some of the places that make a store, not by the static or c10d
rendezvous. This runs torchrun with the store's default turned to the legacy server where libuv is
missing, and changes nothing where it is there. Same arguments as torchrun:

    python3 packaging/torchrun-nolibuv.py --no-python --nproc-per-node 2 workbench-cli worker ...
"""
import os
import sys


def libuv_missing(dist):
    try:
        dist.TCPStore("127.0.0.1", 0, 1, True, use_libuv=True)
        return False
    except RuntimeError as e:
        return "libuv" in str(e)


def main():
    import torch.distributed as dist

    if libuv_missing(dist):
        os.environ["USE_LIBUV"] = "0"
        base = dist.TCPStore

        class LegacyTCPStore(base):
            def __init__(self, *args, **kwargs):
                kwargs.setdefault("use_libuv", False)
                super().__init__(*args, **kwargs)

        dist.TCPStore = LegacyTCPStore
        # The rendezvous modules bind the name at import: patch them where already imported.
        import torch.distributed.elastic.rendezvous.c10d_rendezvous_backend as c10d_backend
        import torch.distributed.elastic.rendezvous.static_tcp_rendezvous as static_rdzv

        c10d_backend.TCPStore = LegacyTCPStore
        static_rdzv.TCPStore = LegacyTCPStore

    from torch.distributed.run import main as torchrun_main

    sys.argv[0] = "torchrun"
    torchrun_main()


if __name__ == "__main__":
    main()
