Code.require_file("support/apt_libs.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:jiffy, :proper])
ExUnit.start()
