/// Word lists for ``ItemGenerator``, most frequent first, in the register of
/// software package descriptions (the corpus's own).
enum Vocabulary {
    static let english = """
    the a and of to for is in this package with that it provides library on be can files as are support from by \
    which an data or use tool program it's you server file system will used using application development this \
    contains version python module documentation support other open source interface command line client it \
    network graphical user text based provides also set functions written allows runtime implementation simple \
    standard such some example these all include tools utility api format binary most one based shared new \
    fast free configuration debug output input management service plugin support web framework database \
    protocol connection image audio video game strategy terminal desktop manager editor kernel driver memory \
    performance security authentication encryption compression parser generator compiler interpreter backend \
    frontend toolkit widget window display font theme language translation locale unicode character string \
    search index query cache storage archive backup synchronization remote local device hardware firmware
    """.split(separator: " ").map(String.init)

    static let spanish = """
    el la de que y en un una para es este paquete con los las se por como del al archivos biblioteca programa \
    proporciona soporte datos sistema servidor aplicación herramienta interfaz línea órdenes cliente red gráfica \
    usuario texto desarrollo documentación módulo versión código abierto fuente configuración imágenes búsqueda \
    indexación introducción transición implementación compresión administración conexión información seguridad
    """.split(separator: " ").map(String.init)

    static let japanese = """
    この パッケージ は を の に が と で ライブラリ プログラム ファイル データ システム サーバ アプリケーション \
    ツール インターフェース コマンド ライン クライアント ネットワーク ユーザ テキスト 開発 文書 モジュール \
    バージョン ソース 設定 画像 検索 索引 状態 機能 提供 します です 含まれて います ための 使用 できます
    """.split(separator: " ").map(String.init)

    static let chinese = """
    这个 软件包 提供 的 了 和 是 在 用于 一个 库 程序 文件 数据 系统 服务器 应用 工具 接口 命令 行 客户端 \
    网络 用户 文本 开发 文档 模块 版本 源代码 配置 图像 搜索 索引 状态 功能 支持 包含 可以 使用
    """.split(separator: " ").map(String.init)
}
