#!/usr/bin/env python3
"""Recomputes ferrum's canonical digests from docs/canonical-encoding.md alone.

An independent implementation of the encodings, used to pin the expected
digests in the tests: if the C++ and this script agree, the digest follows the
documented bytes and not an accident of the C++ code.

    tools/canonical_digest.py examples/plans/two_nodes.json
prints the plan hash and, per bucket, the program binding fingerprint, given
the offsets and capacities the layout rules assign (conservative pools only).
"""
import hashlib
import json
import struct
import sys

ENUMS = {
    "kind": ["binding", "workspace"],
    "lifetime": ["invocation", "persistent", "history"],
    "usage": ["binding", "storage", "uniform", "staging"],
    "element": ["u8", "u16", "u32", "u64", "i32", "f16", "f32"],
    "allocator": ["linear-arena"],
    "view": ["contiguous", "strided"],
    "liveness": ["conservative", "interval"],
    "queue": ["compute", "transfer", "async-compute"],
    "access": ["read", "write", "read-write", "sampled", "storage-read", "storage-write",
               "storage-read-write", "color-attachment", "depth-attachment", "depth-read",
               "transfer-src", "transfer-dst", "present", "vertex", "index", "indirect",
               "uniform"],
    "format": ["rgba8-unorm", "bgra8-unorm", "rgba16-float", "r32-float", "d32-float", "rgba32-float",
               "rgba8-srgb", "bgra8-srgb", "d16-unorm", "d24-unorm-s8-uint", "d32-float-s8-uint",
               "b10g11r11-float", "a2b10g10r10-unorm", "r8-unorm", "rg8-unorm", "r16-unorm", "rg16-unorm",
               "r16-float", "rg16-float", "rg32-float", "bc1-rgba-unorm", "bc1-rgba-srgb", "bc3-unorm",
               "bc3-srgb", "bc4-unorm", "bc5-unorm", "bc7-unorm", "bc7-srgb"],
    "memory": ["device", "upload", "readback", "imported"],
}


class Writer:
    def __init__(self):
        self.data = bytearray()

    def u8(self, v):
        self.data += struct.pack("<B", v)

    def u64(self, v):
        self.data += struct.pack("<Q", v)

    def str(self, s):
        b = s.encode("ascii")
        self.u64(len(b))
        self.data += b

    def enum(self, kind, name):
        self.u8(ENUMS[kind].index(name))

    def opt_str(self, s):
        if s is None:
            self.u8(0)
        else:
            self.u8(1)
            self.str(s)

    def digest(self):
        return hashlib.sha256(bytes(self.data)).digest()


def key(s):
    return s.encode("ascii")


def node_accesses(node):
    """Each (resource, access, range) a node declares: an access array gives
    one per entry; range is (base mip, mips, base layer, layers), counts 0
    running to the last, and (0, 0, 0, 0) for the whole image."""
    out = []
    for r, value in node.get("access", {}).items():
        for entry in value if isinstance(value, list) else [value]:
            if isinstance(entry, str):
                out.append((r, entry, (0, 0, 0, 0)))
            else:
                mips = entry.get("mips", [0, 0])
                layers = entry.get("layers", [0, 0])
                out.append((r, entry["access"], (mips[0], mips[1], layers[0], layers[1])))
    return out


def plan_hash(plan):
    w = Writer()
    v2 = plan["format"] == "ferrum.plan.v2"
    w.str(plan["format"])
    w.u64(len(plan["nodes"]))
    for node in plan["nodes"]:
        w.str(node["id"])
        # A resource is listed again for each further entry of its access array.
        extra = [r for r, value in node.get("access", {}).items()
                 if isinstance(value, list) for _ in value[1:]]
        uses = sorted(node["resources"] + extra, key=key)
        w.u64(len(uses))
        for r in uses:
            w.str(r)
        w.opt_str(node.get("binding"))
        if v2:
            w.u8(ENUMS["queue"].index(node.get("queue", "compute")))
            after = sorted(node.get("after", []), key=key)
            w.u64(len(after))
            for d in after:
                w.str(d)
    resources = sorted(plan["resources"], key=lambda r: key(r["id"]))
    w.u64(len(resources))
    for r in resources:
        w.str(r["id"])
        w.str(r["pool"])
        w.enum("kind", r["kind"])
        w.opt_str(r.get("node"))
        if "image" in r:
            # An image keeps a buffer's defaults: fixed 0, alignment 1,
            # storage, u8, linear-arena, contiguous, no contract.
            w.u64(0); w.u64(0); w.u8(0); w.u64(1)
            w.enum("lifetime", r["lifetime"])
            w.enum("usage", "storage"); w.enum("element", "u8")
            w.enum("allocator", "linear-arena"); w.enum("view", "contiguous"); w.str("")
            continue
        d = r["demand"]
        if "fixed" in d:
            w.u64(d["fixed"]); w.u64(0); w.u8(0)
        else:
            w.u64(d["base"]); w.u64(d["per_unit"]); w.u8(1); w.u8(d["dimension"])
        w.u64(r["alignment"])
        w.enum("lifetime", r["lifetime"])
        w.enum("usage", r["usage"])
        w.enum("element", r["element"])
        w.enum("allocator", r["storage"]["allocator"])
        w.enum("view", r["storage"]["view"])
        w.str(r["storage"]["contract"])
    buckets = sorted(plan["buckets"], key=lambda b: (key(b["class"]), b["capacity"]))
    w.u64(len(buckets))
    for b in buckets:
        w.str(b["class"])
        for d in b["capacity"]:
            w.u64(d)
        budgets = sorted(b["budgets"], key=lambda x: key(x["pool"]))
        w.u64(len(budgets))
        for x in budgets:
            w.str(x["pool"]); w.u64(x["min"]); w.u64(x["max"])
    pools = sorted(plan.get("pools", {}).items(), key=lambda kv: key(kv[0]))
    w.u64(len(pools))
    for pool, options in pools:
        w.str(pool)
        w.enum("liveness", options.get("liveness", "conservative"))
    w.u64(plan["lanes"])
    w.u64(plan["budget_bytes"])
    if v2:
        # Declared accesses other than read-write (the default, so declaring
        # it is no declaration): nodes in plan order, resources in id order;
        # only when there is one, so other plans end at budget_bytes.
        # Accesses to part of an image (`ranged`) are a part of their own.
        declared = []
        ranged = []
        for i, node in enumerate(plan["nodes"]):
            order = lambda e: (key(e[0]), e[2][0], e[2][2])
            for r, access, rng in sorted(node_accesses(node), key=order):
                if rng != (0, 0, 0, 0):
                    ranged.append((i, r, access, rng))
                elif access != "read-write":
                    declared.append((i, r, access))
        # Declared memory classes other than the derived one (upload for a
        # pool of binding resources, device for any other), pools in id
        # order; with one, the accesses' part is written even when empty.
        binding_pools = {r["pool"] for r in plan["resources"] if r["kind"] == "binding"}
        classes = [(pool, options["memory"]) for pool, options in pools
                   if "memory" in options
                   and options["memory"] != ("upload" if pool in binding_pools else "device")]
        images = [r for r in resources if "image" in r]
        # History pairs: each previous and its current, previous in id order;
        # with one, every part before is written, even when empty.
        histories = [(r["id"], r["history_of"]) for r in resources if "history_of" in r]
        # Culling: the kept resources in id order and whether the plan
        # culls; with either, every part before is written, even when empty.
        kept = [r["id"] for r in resources if r.get("kept", False)]
        culling = bool(kept) or not plan.get("cull", True)
        histories_part = bool(histories) or culling
        ranged_part = bool(ranged) or histories_part
        if declared or classes or images or ranged_part:
            w.u64(len(declared))
            for i, r, access in declared:
                w.u64(i)
                w.str(r)
                w.enum("access", access)
        if classes or images or ranged_part:
            w.u64(len(classes))
            for pool, memory in classes:
                w.str(pool)
                w.enum("memory", memory)
        if images or ranged_part:
            # Image resources in id order, after the classes' part.
            w.u64(len(images))
            for r in images:
                image = r["image"]
                extent = image["extent"]
                w.str(r["id"])
                w.enum("format", image["format"])
                if extent == "bucket":
                    w.u8(1)
                    w.u64(0)
                    w.u64(0)
                elif isinstance(extent, str):
                    # "bucket/<k>": a fraction of the bucket's, k where a width goes.
                    w.u8(2)
                    w.u64(int(extent[len("bucket/"):]))
                    w.u64(0)
                else:
                    w.u8(0)
                    w.u64(extent[0])
                    w.u64(extent[1])
                w.u64(image.get("mips", 1))
                w.u64(image.get("layers", 1))
        if ranged_part:
            # Accesses to part of an image, after the images' part.
            w.u64(len(ranged))
            for i, r, access, rng in ranged:
                w.u64(i)
                w.str(r)
                w.enum("access", access)
                for n in rng:
                    w.u64(n)
        if histories_part:
            # History pairs, after the ranged accesses' part.
            w.u64(len(histories))
            for previous, current in histories:
                w.str(previous)
                w.str(current)
        if culling:
            # After the history pairs' part.
            w.u64(len(kept))
            for r in kept:
                w.str(r)
            w.u8(1 if plan.get("cull", True) else 0)
    return w.digest()


def claim_digest(resource_ids):
    w = Writer()
    w.str("ferrum.claim-identity.v1")
    ids = sorted(resource_ids, key=key)
    w.u64(len(ids))
    for r in ids:
        w.str(r)
    return w.digest()


def demand(r, dims):
    d = r["demand"]
    size = d["fixed"] if "fixed" in d else d["base"] + d["per_unit"] * dims[d["dimension"]]
    a = r["alignment"]
    return (size + a - 1) // a * a


def fingerprints(plan):
    nodes = {n["id"]: i for i, n in enumerate(plan["nodes"])}
    bindings = [r for r in plan["resources"] if r["kind"] == "binding"]
    if not bindings:
        return {}
    out = {}
    for b in plan["buckets"]:
        dims = b["capacity"]
        bucket_id = "%s@%dx%dx%d" % (b["class"], *dims)
        # Conservative packing: decreasing alignment, ties by resource id.
        order = sorted(bindings, key=lambda r: (-r["alignment"], key(r["id"])))
        offset, slots = 0, []
        for r in order:
            size = demand(r, dims)
            slots.append((nodes[r["node"]], r["node"], r["id"], offset, size, r["alignment"]))
            offset += size
        w = Writer()
        w.str("ferrum.program-binding-layout.v1")
        w.str(bucket_id)
        w.data += claim_digest([r["id"] for r in bindings])
        w.u64(offset)
        w.u64(len(slots))
        for node_index, node, resource, off, cap, align in sorted(slots):
            w.u64(node_index); w.str(node); w.str(resource); w.u64(off); w.u64(cap); w.u64(align)
        out[bucket_id] = w.digest()
    return out


def main():
    plan = json.load(open(sys.argv[1]))
    print("plan_hash sha256/" + plan_hash(plan).hex())
    for bucket_id, digest in sorted(fingerprints(plan).items(), key=lambda kv: key(kv[0])):
        print("fingerprint %s sha256/%s" % (bucket_id, digest.hex()))


if __name__ == "__main__":
    main()
