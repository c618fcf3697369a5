#include "setup/json_fields.h"

#include <QLocale>

#include "wb/proto/config_json.h"

namespace wb::ui {
using nlohmann::json;

json::json_pointer fieldPointer(const QString& dotted) {
  QString p = QLatin1Char('/') + dotted;
  p.replace(QLatin1Char('.'), QLatin1Char('/'));
  return json::json_pointer(p.toStdString());
}

json fieldValue(const json& doc, const QString& dotted, const json& fallback) {
  const auto ptr = fieldPointer(dotted);
  return doc.contains(ptr) ? doc.at(ptr) : fallback;
}

QString fieldString(const json& doc, const QString& dotted, const QString& fallback) {
  const json v = fieldValue(doc, dotted);
  return v.is_string() ? QString::fromStdString(v.get<std::string>()) : fallback;
}

double fieldNumber(const json& doc, const QString& dotted, double fallback) {
  const json v = fieldValue(doc, dotted);
  return v.is_number() ? v.get<double>() : fallback;
}

bool fieldBool(const json& doc, const QString& dotted, bool fallback) {
  const json v = fieldValue(doc, dotted);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

void setField(json& doc, const QString& dotted, json value) { doc[fieldPointer(dotted)] = std::move(value); }

json numberOrText(const QString& text) {
  const QString t = text.trimmed();
  bool ok = false;
  double d = QLocale::c().toDouble(t, &ok);
  if (!ok) d = QLocale().toDouble(t, &ok);
  if (ok) return d;
  return t.toStdString();
}

const json& defaultConfig() {
  static const json doc = proto::configToJson(Config{});
  return doc;
}

double configNumber(const json& doc, const QString& dotted) {
  return fieldNumber(doc, dotted, fieldNumber(defaultConfig(), dotted, 0.0));
}

QString configString(const json& doc, const QString& dotted) {
  return fieldString(doc, dotted, fieldString(defaultConfig(), dotted));
}

bool configBool(const json& doc, const QString& dotted) { return fieldBool(doc, dotted, fieldBool(defaultConfig(), dotted, false)); }

}  // namespace wb::ui
