#pragma once
// The machinery behind every typed record on disk (the events, summary.json, tune.json,
// ladder.json, pairs.json, estimates): each struct lists its fields once, as
//   WB_FIELDS(MyStruct) { f("key", e.member); ... }
// and that one list drives the writer (fieldsToJson), the tolerant reader (fieldsFromJson: a
// missing key, null or a value of another type keeps the member's default; never throws) and,
// for a struct with a member `nlohmann::json unknown`, the passing on of fields it does not know
// (read into `unknown`, written back first), so a read-modify-write keeps a newer writer's fields.
// A number that is not finite is written as null.
//
// Where the file's shape is not the struct's, the list says so:
//   f("wall_s", group([&](auto&& g) { g("median", e.wall_s); g("min", e.wall_min); }))
//     members written as one object of their own;
//   f("verdict", words(e.verdict, verdictWord, verdictFromWord))   an enum as its word;
//   f("estimate", via(e.estimate, estimateJson, estimateFromJson))  a record with its own reader;
//   f("pairs", derived(e.pairsCounted()))                          written for readers, never read;
//   f("best", orNull(e.best))                                      an empty optional as null, not absent.
//
// The field list goes in the .cpp that reads and writes the struct, in the struct's own namespace
// (found by ADL; not in an unnamed namespace). Everything here is in an unnamed namespace: each
// .cpp that includes it has its own copy.
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/proto/run_summary.h"

namespace wb::proto {
namespace {

struct Fields {};  // visit(Fields{}, e, f): the field lists of the including file

#define WB_FIELDS(T) \
  template <class E, class F> \
  std::enable_if_t<std::is_same_v<std::remove_const_t<E>, T>> visit(::wb::proto::Fields, E& e, F&& f)

// The shapes a field list may give a field besides a member (see the top of this file).
template <class L>
struct Group {
  L visit;  // called with the visitor of the group's own object
};
template <class L>
Group<L> group(L visit) { return {std::move(visit)}; }

template <class M, class To, class From>
struct Words {
  M& member;
  To to;      // member -> its word
  From from;  // word -> member
};
template <class M, class To, class From>
Words<M, To, From> words(M& member, To to, From from) { return {member, to, from}; }

template <class M, class To, class From>
struct Via {
  M& member;
  To to;      // member -> json
  From from;  // json -> member (called only when the key is there)
};
template <class M, class To, class From>
Via<M, To, From> via(M& member, To to, From from) { return {member, to, from}; }

template <class O>
struct OrNull {
  O& member;  // a std::optional: written as null when empty
};
template <class O>
OrNull<O> orNull(O& member) { return {member}; }

template <class T>
struct Derived {
  T value;
};
template <class T>
Derived<T> derived(T value) { return {std::move(value)}; }

template <class T, class = void>
struct HasUnknown : std::false_type {};
template <class T>
struct HasUnknown<T, std::void_t<decltype(std::declval<T&>().unknown)>> : std::true_type {};

template <class T>
void fieldsToJson(const T& v, nlohmann::json& out);
template <class T>
void fieldsFromJson(const nlohmann::json& in, T& v);

struct Writer {
  nlohmann::json& out;
  void operator()(const char* key, int v) const { out[key] = v; }
  void operator()(const char* key, int64_t v) const { out[key] = v; }
  void operator()(const char* key, double v) const { out[key] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }
  void operator()(const char* key, bool v) const { out[key] = v; }
  void operator()(const char* key, const std::string& v) const { out[key] = v; }
  void operator()(const char* key, const nlohmann::json& v) const {
    if (!v.is_null()) out[key] = v;  // an absent part stays absent
  }
  void operator()(const char* key, const RunSummary& v) const { out[key] = toJson(v); }  // run_summary.cpp's
  void operator()(const char* key, const FlopsFigures& v) const { out[key] = flopsJson(v); }  // flops_record.cpp's
  void operator()(const char* key, const Config& v) const { out[key] = configToJson(v); }
  template <class L>
  void operator()(const char* key, const Group<L>& g) const {
    nlohmann::json o = nlohmann::json::object();
    g.visit(Writer{o});
    out[key] = std::move(o);
  }
  template <class M, class To, class From>
  void operator()(const char* key, const Words<M, To, From>& w) const { out[key] = w.to(w.member); }
  template <class M, class To, class From>
  void operator()(const char* key, const Via<M, To, From>& w) const { out[key] = w.to(w.member); }
  template <class T>
  void operator()(const char* key, const Derived<T>& d) const { (*this)(key, d.value); }
  void operator()(const char* key, const Derived<nlohmann::json>& d) const { out[key] = d.value; }  // null too
  template <class O>
  void operator()(const char* key, const OrNull<O>& w) const {
    if (w.member) (*this)(key, *w.member);
    else out[key] = nullptr;
  }
  template <class T>
  void operator()(const char* key, const std::optional<T>& v) const {
    if (v) (*this)(key, *v);
  }
  template <class T>
  void operator()(const char* key, const std::map<std::string, T>& items) const {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [name, item] : items) fieldsToJson(item, o[name] = nlohmann::json::object());
    out[key] = std::move(o);
  }
  void operator()(const char* key, const std::vector<std::string>& items) const { out[key] = items; }
  void operator()(const char* key, const std::map<std::string, double>& items) const {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [name, v] : items) Writer{o}(name.c_str(), v);
    out[key] = std::move(o);
  }
  template <class T>  // a list of records: an array of objects (of numbers: an array of numbers)
  void operator()(const char* key, const std::vector<T>& items) const {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& item : items) {
      if constexpr (std::is_arithmetic_v<T>) a.push_back(item);
      else fieldsToJson(item, a.emplace_back(nlohmann::json::object()));
    }
    out[key] = std::move(a);
  }
  template <class T>  // a struct of its own: an object
  auto operator()(const char* key, const T& v) const
      -> decltype(visit(Fields{}, v, std::declval<const Writer&>()), void()) {
    nlohmann::json o = nlohmann::json::object();
    fieldsToJson(v, o);
    out[key] = std::move(o);
  }
};

template <class T>
struct IsList : std::false_type {};
template <class T>
struct IsList<std::vector<T>> : std::true_type {};

// Whether j holds a value a member of type T can take (for optional members).
template <class T>
bool holds(const nlohmann::json& j) {
  if constexpr (std::is_same_v<T, std::string>) return j.is_string();
  else if constexpr (IsList<T>::value) return j.is_array();
  else if constexpr (std::is_same_v<T, bool>) return j.is_boolean();
  else if constexpr (std::is_arithmetic_v<T>) return j.is_number();
  else return j.is_object() && !j.empty();
}

struct Reader {
  const nlohmann::json& in;
  void operator()(const char* key, int& v) const { v = static_cast<int>(intOr(in, key, v)); }
  void operator()(const char* key, int64_t& v) const { v = intOr(in, key, v); }
  void operator()(const char* key, double& v) const { v = numberOr(in, key, v); }
  void operator()(const char* key, bool& v) const { v = boolOr(in, key, v); }
  void operator()(const char* key, std::string& v) const { v = stringOr(in, key, v); }
  void operator()(const char* key, nlohmann::json& v) const {  // a free-form part: an object or a list
    const nlohmann::json* j = find(key);
    if (j && ((j->is_object() && !j->empty()) || j->is_array())) v = *j;
  }
  void operator()(const char* key, RunSummary& v) const { v = readRunSummary(objectOr(in, key)); }
  void operator()(const char* key, Config& v) const {
    const nlohmann::json* j = find(key);
    if (!j || !j->is_object()) return;
    if (auto c = configFromJson(*j); c.ok()) v = std::move(*c);
  }
  template <class L>
  void operator()(const char* key, const Group<L>& g) const { g.visit(Reader{objectOr(in, key)}); }
  template <class M, class To, class From>
  void operator()(const char* key, const Words<M, To, From>& w) const {
    if (const nlohmann::json* j = find(key); j && j->is_string()) w.member = w.from(j->template get<std::string>());
  }
  template <class M, class To, class From>
  void operator()(const char* key, const Via<M, To, From>& w) const {
    if (const nlohmann::json* j = find(key)) w.member = w.from(*j);
  }
  template <class T>
  void operator()(const char* key, const Derived<T>&) const {}  // written for readers, never read
  template <class O>
  void operator()(const char* key, const OrNull<O>& w) const { (*this)(key, w.member); }
  void operator()(const char* key, FlopsFigures& v) const {
    if (auto f = readFlops(nlohmann::json{{kFlopsKey, objectOr(in, key)}})) v = std::move(*f);
  }
  template <class T>
  void operator()(const char* key, std::optional<T>& v) const {
    const nlohmann::json* j = find(key);
    if (!j || !holds<T>(*j)) return;
    T value{};
    (*this)(key, value);
    v = std::move(value);
  }
  template <class T>
  void operator()(const char* key, std::map<std::string, T>& items) const {
    const nlohmann::json& o = objectOr(in, key);
    for (auto it = o.begin(); it != o.end(); ++it) {
      if (!it->is_object()) continue;
      T item{};
      fieldsFromJson(*it, item);
      items[it.key()] = std::move(item);
    }
  }
  void operator()(const char* key, std::map<std::string, double>& items) const {  // numbers only
    const nlohmann::json& o = objectOr(in, key);
    for (auto it = o.begin(); it != o.end(); ++it)
      if (it->is_number()) items[it.key()] = it->template get<double>();
  }
  void operator()(const char* key, std::vector<std::string>& items) const {
    const nlohmann::json* j = find(key);
    if (!j || !j->is_array()) return;
    items.clear();
    for (const auto& x : *j)
      if (x.is_string()) items.push_back(x.get<std::string>());
  }
  template <class T>  // items that are not objects (not numbers) are skipped
  void operator()(const char* key, std::vector<T>& items) const {
    const nlohmann::json* j = find(key);
    if (!j || !j->is_array()) return;
    items.clear();
    for (const auto& x : *j) {
      if constexpr (std::is_arithmetic_v<T>) {
        if (x.is_number()) items.push_back(x.template get<T>());
      } else if (x.is_object()) {
        fieldsFromJson(x, items.emplace_back());
      }
    }
  }
  template <class T>
  auto operator()(const char* key, T& v) const -> decltype(visit(Fields{}, v, std::declval<const Reader&>()), void()) {
    fieldsFromJson(objectOr(in, key), v);
  }

  const nlohmann::json* find(const char* key) const {
    if (!in.is_object()) return nullptr;
    auto it = in.find(key);
    return it == in.end() ? nullptr : &*it;
  }
};

// Adds v's fields to out (an object): the fields it passed on first, then its own.
template <class T>
void fieldsToJson(const T& v, nlohmann::json& out) {
  if constexpr (HasUnknown<T>::value) {
    if (v.unknown.is_object())
      for (auto it = v.unknown.begin(); it != v.unknown.end(); ++it) out[it.key()] = *it;
  }
  visit(Fields{}, v, Writer{out});
}

// Reads v's fields from in; with an `unknown` member, keeps the fields the list does not name.
template <class T>
void fieldsFromJson(const nlohmann::json& in, T& v) {
  visit(Fields{}, v, Reader{in});
  if constexpr (HasUnknown<T>::value) {
    if (!in.is_object()) return;
    std::set<std::string> known;
    visit(Fields{}, v, [&known](const char* key, const auto&) { known.insert(key); });
    for (auto it = in.begin(); it != in.end(); ++it)
      if (!known.count(it.key())) v.unknown[it.key()] = *it;
  }
}

// The kind of value a member takes, as wb/proto/schema.h lists it for writers in other
// languages: a number a writer must give as an integer is "integer", a part of its own "object".
inline const char* kindOf(const int&) { return "integer"; }
inline const char* kindOf(const int64_t&) { return "integer"; }
inline const char* kindOf(const double&) { return "number"; }
inline const char* kindOf(const bool&) { return "boolean"; }
inline const char* kindOf(const std::string&) { return "string"; }
inline const char* kindOf(const nlohmann::json&) { return "json"; }
template <class M, class To, class From>
const char* kindOf(const Words<M, To, From>&) { return "string"; }
template <class T>
const char* kindOf(const T&) { return "object"; }  // a struct of its own (RunSummary, FlopsFigures, ...)
template <class T>
const char* kindOf(const std::vector<T>&) { return "list"; }
template <class T>
const char* kindOf(const std::optional<T>&) { return kindOf(T{}); }
template <class T>
const char* kindOf(const std::map<std::string, T>&) { return "map"; }
template <class T>
const char* kindOf(const Derived<T>& d) { return kindOf(d.value); }
template <class O>
const char* kindOf(const OrNull<O>& w) { return kindOf(w.member); }

// T's field list as {key: kind}.
template <class T>
nlohmann::json fieldKinds() {
  nlohmann::json out = nlohmann::json::object();
  const T v{};
  visit(Fields{}, v, [&out](const char* key, const auto& member) { out[key] = kindOf(member); });
  return out;
}

// A record from its JSON (never throws; a missing key keeps its default; not an object: the
// defaults), and a record as one JSON object: what each record's own reader and writer are.
template <class T>
T readAs(const nlohmann::json& j) {
  T v{};
  fieldsFromJson(j, v);
  return v;
}
template <class T>
nlohmann::json writeAs(const T& v) {
  nlohmann::json out = nlohmann::json::object();
  fieldsToJson(v, out);
  return out;
}

}  // namespace
}  // namespace wb::proto
