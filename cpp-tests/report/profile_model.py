"""What a reader must show for a test profile, derived from the Profile itself.

report_fixture_gen writes the Profile it built into manifest.json ("profile"); the consumer
tests compute their expectations here from that input, independently of the writers under test.
"""
import os


class ProfileModel:
    def __init__(self, profile):
        self.p = profile
        self.functions = profile["functions"]

    def location_name(self, location):
        """pprof's name for an address nothing names: its mapping's file name in brackets."""
        file = self.p["mappings"][location["mapping"]]["file"]
        return "[" + os.path.basename(file) + "]" if file and not file.startswith("[") else file or "[unknown]"

    def frames(self, sample):
        """The sample's frames leaf first: (name, file, line, inlined, kind) per inline-chain entry."""
        out = []
        for loc_index in sample["locations"]:
            location = self.p["locations"][loc_index]
            lines = location["lines"]
            if not lines:
                out.append((self.location_name(location), "", 0, False, "unknown"))
            for k, line in enumerate(lines):
                f = self.functions[line["function"]]
                out.append((f["name"], f["file"], line["line"], k < len(lines) - 1, f["kind"]))
        return out

    def samples(self):
        return self.p["samples"]

    def total(self):
        return sum(s["count"] for s in self.samples())

    def flat_and_cum(self, key):
        """{key(frame): [flat, cum]}: flat counts a sample at its leaf frame, cum once per sample
        for every distinct key its stack holds."""
        table = {}
        for s in self.samples():
            frames = self.frames(s)
            for k in {key(f) for f in frames}:
                table.setdefault(k, [0, 0])[1] += s["count"]
            table[key(frames[0])][0] += s["count"]
        return table

    def matching(self, predicate):
        """Samples whose stack holds a frame whose name satisfies `predicate`."""
        return sum(s["count"] for s in self.samples() if any(predicate(f[0]) for f in self.frames(s)))
