# The launch order resolved to a binary's functions, read from `nm --defined-only` on stdin; the
# order's file is `list`. A listed name the binary has stands as it is. One it no longer has
# stands for every function with its name without the hash rustc puts in it (`17h<hex>E`) and the
# number LTO appends (`.1234`), which change whenever a crate's dependencies do.
# mode=resolve (the default, scripts/link/cc): the binary's names to place, in the list's order.
# mode=count (scripts/bench-app/lib.mjs): "<as listed> <by name only> <listed>".
function key(name) {
  sub(/\.(llvm\.)?[0-9]+$/, "", name)
  sub(/17h[0-9a-f]+E$/, "E", name)
  return name
}
$2 ~ /^[tTwW]$/ { names[++count] = $3; present[$3] = 1; keys[key($3)] = 1 }
END {
  while ((getline name < list) > 0) {
    if (name == "") continue
    rank[name] = ++n
    if (name in present) exact++
    else if (key(name) in keys) byName++
    if (!(name in present) && !(key(name) in stale)) stale[key(name)] = n
  }
  if (mode == "count") {
    print exact + 0, byName + 0, n + 0
    exit
  }
  for (i = 1; i <= count; i++) {
    name = names[i]
    if (name in rank) print rank[name] "\t" name
    else if (key(name) in stale) print stale[key(name)] "\t" name
  }
}
