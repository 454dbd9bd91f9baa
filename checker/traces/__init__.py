"""Traces as files and pictures: ITF, trace files, replay, timelines, the viewer."""
